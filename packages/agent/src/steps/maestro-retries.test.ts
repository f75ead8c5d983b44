// retry_failed_tests in the maestro step, on the stand-ins: a "FAIL 1x …" assertion fails a flow's first run
// on the device only, as a flaky flow does.
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDeviceLab, type DeviceLab } from "../../test/stand-ins/device-lab.ts";
import { runMaestroStep } from "./maestro-step.ts";
import { ANDROID_BINARY, makeStepContext, type TestStepContext } from "./test-context.ts";

const APP = fileURLToPath(new URL("../../../server/test/fixtures/binaries/app-basic.apk", import.meta.url));
const SERIAL = "emulator-5554";
// biome-ignore lint/suspicious/noTemplateCurlyInString: maestro's own ${} placeholder, filled by -e APP_ID=…
const APP_ID = "${APP_ID}";
const flow = (name: string, assertion: string) =>
  `appId: ${APP_ID}\nname: ${name}\n---\n- launchApp\n- assertVisible: "${assertion}"\n`;

let lab: DeviceLab | undefined;
let ctx: TestStepContext | undefined;

afterEach(async () => {
  vi.unstubAllEnvs();
  await ctx?.cleanup();
  lab?.cleanup();
  ctx = undefined;
  lab = undefined;
});

async function setUp() {
  lab = await createDeviceLab({ devices: [{ serial: SERIAL, model: "Pixel 7" }], timeScale: 0.05 });
  for (const [name, value] of Object.entries(lab.env)) vi.stubEnv(name, value);
  ctx = await makeStepContext({
    device: { serial: SERIAL, platform: "android", model: "Pixel 7", os_version: "14" },
    appPath: async () => APP,
    binary: { ...ANDROID_BINARY, package_name: "com.example.basic" },
    packageName: "com.example.basic",
  });
  return { lab, ctx };
}

const maestroTargets = (l: DeviceLab) =>
  l
    .calls()
    .filter((call) => call.tool === "maestro")
    .map((call) => (call.argv.at(-1) ?? "").split("/").at(-1));

describe("retry_failed_tests in the maestro step", () => {
  it("runs each flow alone and a failed one again until it passes; the step passes", async () => {
    const { lab, ctx } = await setUp();
    const outcome = await runMaestroStep(
      {
        type: "maestro",
        flows: [flow("Login", "Welcome"), flow("Cart", "FAIL 1x Cart shown")],
        retry_failed_tests: 2,
        record_video: "never",
      },
      ctx,
    );
    expect(outcome).toEqual({ status: "passed", message: null });
    expect(maestroTargets(lab)).toEqual(["flow-01.yaml", "flow-02.yaml", "flow-02.yaml"]);
    expect(ctx.cases.map((c) => [c.name, c.status, c.retry])).toEqual([
      ["Login", "passed", 0],
      ["Cart", "failed", 0],
      ["Cart", "passed", 1],
    ]);
    // The failed try names the step's whole device log, as a failed flow does without retries.
    expect(ctx.cases[1]?.artifacts).toEqual([`device-${SERIAL}/logcat.txt`]);
    expect(lab.testRuns(SERIAL)).toEqual({ "flow:Login": 1, "flow:Cart": 2 });
  });

  it("gives a flow that fails every time N reruns and fails the step", async () => {
    const { lab, ctx } = await setUp();
    const outcome = await runMaestroStep(
      {
        type: "maestro",
        flows: [flow("Cart", "FAIL Cart shown"), flow("Login", "Welcome")],
        retry_failed_tests: 2,
        record_video: "never",
      },
      ctx,
    );
    expect(outcome).toEqual({ status: "failed", message: "1 of 2 test cases failed" });
    expect(maestroTargets(lab)).toEqual(["flow-01.yaml", "flow-02.yaml", "flow-01.yaml", "flow-01.yaml"]);
    expect(ctx.cases.map((c) => [c.name, c.status, c.retry])).toEqual([
      ["Cart", "failed", 0],
      ["Login", "passed", 0],
      ["Cart", "failed", 1],
      ["Cart", "failed", 2],
    ]);
  });
});
