import { afterEach, describe, expect, it } from "vitest";
import { type DeviceCaptures, type DeviceStepStrategy, runDeviceStep } from "./device-step.ts";
import { errored, PASSED } from "./outcome.ts";
import { makeStepContext, type TestStepContext } from "./test-context.ts";

/** Captures that only record what the lifecycle and the run did with them. */
function recordingCaptures(calls: string[]): DeviceCaptures {
  return {
    async stop() {
      calls.push("stop");
    },
    async collect(anyFailure) {
      calls.push(`collect ${anyFailure}`);
      return [];
    },
  };
}

function strategy(
  calls: string[],
  run: DeviceStepStrategy<string, DeviceCaptures>["run"],
  refuse: () => ReturnType<DeviceStepStrategy<string, DeviceCaptures>["refuse"]> = () => null,
): DeviceStepStrategy<string, DeviceCaptures> {
  return {
    refuse,
    async prepare() {
      calls.push("prepare");
      return { ready: "device ready" };
    },
    async startCaptures() {
      calls.push("captures");
      return recordingCaptures(calls);
    },
    run,
  };
}

describe("runDeviceStep", () => {
  let ctx: TestStepContext;
  afterEach(() => ctx?.cleanup());

  it("stops and drops the captures when the run throws, and the run's error is the one seen", async () => {
    ctx = await makeStepContext();
    const calls: string[] = [];
    const step = runDeviceStep(
      {},
      ctx,
      strategy(calls, async () => {
        calls.push("run");
        throw new Error("the parser broke");
      }),
    );
    await expect(step).rejects.toThrow("the parser broke");
    expect(calls).toEqual(["prepare", "captures", "run", "stop", "collect false"]);
  });

  it("leaves captures the run stopped and collected as the run left them", async () => {
    ctx = await makeStepContext();
    const calls: string[] = [];
    const outcome = await runDeviceStep(
      {},
      ctx,
      strategy(calls, async (ready, captures) => {
        calls.push(`run on ${ready}`);
        await captures.stop();
        await captures.collect(true, []);
        return PASSED;
      }),
    );
    expect(outcome).toEqual(PASSED);
    expect(calls).toEqual(["prepare", "captures", "run on device ready", "stop", "collect true"]);
  });

  it("prepares nothing for a step that cannot run here, nor for a cancelled one", async () => {
    ctx = await makeStepContext();
    const calls: string[] = [];
    const refused = await runDeviceStep(
      {},
      ctx,
      strategy(
        calls,
        async () => PASSED,
        () => errored("needs an Android device"),
      ),
    );
    expect(refused).toEqual(errored("needs an Android device"));
    ctx.abort("the plan's timeout");
    const cancelled = await runDeviceStep(
      {},
      ctx,
      strategy(calls, async () => PASSED),
    );
    expect(cancelled).toEqual({ status: "cancelled", message: "the plan's timeout" });
    expect(calls).toEqual([]);
  });
});
