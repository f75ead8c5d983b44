import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { useFakeTools } from "./fake-tools.ts";
import { runMaestroStep } from "./maestro-step.ts";
import type { Device } from "./step-types.ts";
import { makeStepContext, type TestStepContext } from "./test-context.ts";

const EMULATOR: Device = {
  serial: "emulator-5554",
  platform: "android",
  model: "sdk_gphone64_x86_64",
  os_version: "14",
};
const LOGIN = "appId: com.example.shop\n---\n- launchApp\n- tapOn: Log in\n";
const CHECKOUT = "appId: com.example.shop\n---\n- launchApp\n- assertVisible: Order confirmed\n";
const STEP = { type: "maestro" as const, flows: [LOGIN, CHECKOUT] };

let ctx: TestStepContext;
afterEach(async () => {
  vi.unstubAllEnvs();
  await ctx.cleanup();
});

describe("runMaestroStep", () => {
  it("writes the flows, runs maestro on the device and passes on a passing report", async () => {
    ctx = await makeStepContext({ device: EMULATOR });
    const calls = useFakeTools(ctx.root, { FAKE_MAESTRO_SCENARIO: "passing" });
    expect(await runMaestroStep(STEP, ctx)).toEqual({ status: "passed", message: null, exit_code: 0 });
    const flowsDir = join(ctx.workDir, "flows");
    expect(calls()).toEqual([
      {
        tool: "maestro",
        argv: [
          "--device",
          "emulator-5554",
          "test",
          "--format",
          "junit",
          "--output",
          join(ctx.workDir, "maestro-report.xml"),
          flowsDir,
        ],
        flows: ["flow-01.yaml", "flow-02.yaml"],
      },
    ]);
    expect(await readFile(join(flowsDir, "flow-02.yaml"), "utf8")).toBe(CHECKOUT);
    expect(ctx.cases.map((c) => `${c.name} ${c.status}`)).toEqual(["Login passed", "Checkout passed"]);
  });

  it("runs without --device on the host", async () => {
    ctx = await makeStepContext();
    const calls = useFakeTools(ctx.root);
    await runMaestroStep(STEP, ctx);
    expect(calls()[0]?.argv.slice(0, 2)).toEqual(["test", "--format"]);
  });

  it("fails when a flow failed", async () => {
    ctx = await makeStepContext({ device: EMULATOR });
    useFakeTools(ctx.root, { FAKE_MAESTRO_SCENARIO: "failing" });
    expect(await runMaestroStep(STEP, ctx)).toEqual({
      status: "failed",
      message: "1 of 2 test cases failed",
      exit_code: 1,
    });
    expect(ctx.cases[1]).toMatchObject({
      name: "Checkout",
      status: "failed",
      message: 'Assertion is false: "Order confirmed" is visible',
    });
  });

  it("errors when maestro wrote no report", async () => {
    ctx = await makeStepContext({ device: EMULATOR });
    useFakeTools(ctx.root, { FAKE_MAESTRO_SCENARIO: "no-report" });
    expect(await runMaestroStep(STEP, ctx)).toEqual({
      status: "errored",
      message: "maestro wrote no report (exit code 1)",
      exit_code: 1,
    });
    expect(ctx.lines("stderr")).toEqual(["Unable to launch app com.example.shop"]);
  });

  it("errors when maestro is not installed", async () => {
    ctx = await makeStepContext();
    vi.stubEnv("PATH", ctx.root);
    const outcome = await runMaestroStep(STEP, ctx);
    expect(outcome.status).toBe("errored");
    expect(outcome.message).toMatch(/^maestro could not start: .*ENOENT/);
  });
});
