import type { Step } from "@testbay/client";
import { afterEach, describe, expect, it } from "vitest";
import { runStep } from "./run-step.ts";
import { makeStepContext, type TestStepContext } from "./test-context.ts";

let ctx: TestStepContext;
afterEach(() => ctx.cleanup());

describe("runStep", () => {
  it("runs each step type with its runner", async () => {
    ctx = await makeStepContext();
    expect(await runStep({ type: "inspect", expect: { debuggable: false } }, ctx)).toMatchObject({
      status: "passed",
    });
    expect(await runStep({ type: "shell", run: "echo from shell" }, ctx)).toMatchObject({ status: "passed" });
    expect(await runStep({ type: "instrumentation", test_package: "x.test" }, ctx)).toEqual({
      status: "errored",
      message: "instrumentation needs an Android device",
    });
    expect(ctx.cases.map((c) => c.name)).toEqual(["debuggable is false"]);
    expect(ctx.lines("stdout")).toEqual(["from shell"]);
  });

  it("errors on an unknown step type", async () => {
    ctx = await makeStepContext();
    expect(await runStep({ type: "teleport" } as unknown as Step, ctx)).toEqual({
      status: "errored",
      message: 'unknown step type "teleport"',
    });
  });

  it("turns an unexpected exception into an errored step", async () => {
    ctx = await makeStepContext({
      testCase: () => {
        throw new Error("disk full");
      },
    });
    expect(await runStep({ type: "inspect", expect: { debuggable: false } }, ctx)).toEqual({
      status: "errored",
      message: "agent error: disk full",
    });
    expect(ctx.lines("agent")[0]).toMatch(/^step failed unexpectedly: Error: disk full/);
  });
});
