/**
 * The lifecycle every device step shares, in the order a device needs it; what a framework does at each stage
 * is its strategy's (instrumentation-step.ts, xcuitest-step.ts, maestro-step.ts). Nothing starts on a cancelled
 * step; a step that cannot run on this device, binary or test package says why before anything is fetched;
 * the device is prepared (app installed, data cleared, tests listed) before any capture starts, so the device
 * log and the video hold the run only; then the run, which collects its results and artifacts. The captures
 * are let go in a finally: a run that throws must not leave logcat, `log stream` or a recorder following a
 * device that the agent's next job claims.
 */
import type { Captures } from "../android/device-captures.ts";
import { cancelled } from "./outcome.ts";
import { stepTimeoutMs } from "./process-outcome.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";

/**
 * A device's captures as the lifecycle handles them: Android's (device-captures.ts) and a simulator's
 * (simulator-captures.ts, whose collect reads its first argument only) both fit.
 */
export type DeviceCaptures = Pick<Captures, "stop" | "collect">;

/** The step's time limit, counted from the step's start: every stage takes its share of one budget. */
export interface StepTime {
  timeoutMs: number;
  /** What is left of it in ms (at least 1, so a command given it still runs and times out at once). */
  left(): number;
}

/** What prepare gives: what the run needs, or the outcome that ends the step there. */
export type Prepared<Ready> = { ready: Ready } | { outcome: StepOutcome };

/** `C`: the captures this framework starts; `| null` in it when a device may have none. */
export interface DeviceStepStrategy<Ready, C extends DeviceCaptures | null> {
  /** Why the step cannot run here (another platform, binary or test package); null when it can. */
  refuse(): StepOutcome | null;
  prepare(time: StepTime): Promise<Prepared<Ready>>;
  /** Starts the device log and the video, when this device has them. */
  startCaptures(ready: Ready): Promise<C>;
  /**
   * Runs the tests and reports them, then stops and collects the captures itself: only the framework knows
   * what failed, and so what to keep, and some name what was kept on the test cases they report after.
   */
  run(ready: Ready, captures: C, time: StepTime): Promise<StepOutcome>;
}

export async function runDeviceStep<Ready, C extends DeviceCaptures | null>(
  step: { timeout_seconds?: number },
  ctx: StepContext,
  strategy: DeviceStepStrategy<Ready, C>,
): Promise<StepOutcome> {
  if (ctx.signal.aborted) return cancelled(ctx.signal);
  const refused = strategy.refuse();
  if (refused) return refused;
  const timeoutMs = stepTimeoutMs(step, ctx);
  const deadline = Date.now() + timeoutMs;
  const time: StepTime = { timeoutMs, left: () => Math.max(1, deadline - Date.now()) };
  const prepared = await strategy.prepare(time);
  if ("outcome" in prepared) return prepared.outcome;
  const started = await strategy.startCaptures(prepared.ready);
  const captures = started === null ? null : released(started);
  try {
    return await strategy.run(prepared.ready, captures === null ? started : captures.captures, time);
  } finally {
    // Every run stops and collects its captures on its way out; this is for one that threw on the way. Its
    // own error is the one to see, so a failure to let the captures go is only logged.
    await captures?.release().catch((error: unknown) => {
      ctx.log("agent", `the captures were not stopped: ${(error as Error).message}`);
    });
  }
}

/**
 * The captures, with a `release` that stops them unless the run did, and drops them (collect, keeping
 * nothing) unless the run collected them: a recorder stopped twice would be waited for twice.
 */
function released<C extends DeviceCaptures>(captures: C): { captures: C; release(): Promise<void> } {
  let stopped = false;
  let collected = false;
  const tracked: C = {
    ...captures,
    async stop() {
      if (stopped) return;
      stopped = true;
      await captures.stop();
    },
    async collect(...args: Parameters<DeviceCaptures["collect"]>) {
      collected = true;
      return captures.collect(...args);
    },
  };
  return {
    captures: tracked,
    async release() {
      await tracked.stop();
      if (!collected) await tracked.collect(false, []);
    },
  };
}
