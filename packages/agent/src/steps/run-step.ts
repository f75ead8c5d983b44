/** Runs one plan step with the runner for its type. */
import type { Step } from "@testbay/client";
import { runInspectStep } from "./inspect-step.ts";
import { runInstrumentationStep } from "./instrumentation-step.ts";
import { runMaestroStep } from "./maestro-step.ts";
import { runShellStep } from "./shell-step.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";
import { runXcuitestStep } from "./xcuitest-step.ts";

export async function runStep(step: Step, ctx: StepContext): Promise<StepOutcome> {
  try {
    switch (step.type) {
      case "inspect":
        return await runInspectStep(step, ctx);
      case "shell":
        return await runShellStep(step, ctx);
      case "instrumentation":
        return await runInstrumentationStep(step, ctx);
      case "maestro":
        return await runMaestroStep(step, ctx);
      case "xcuitest":
        return await runXcuitestStep(step, ctx);
      default:
        return {
          status: "errored",
          message: `unknown step type ${JSON.stringify((step as { type: unknown }).type)}`,
        };
    }
  } catch (error) {
    // A runner bug (or a full disk) ends this step, not the agent and the other device runs.
    ctx.log("agent", `step failed unexpectedly: ${(error as Error).stack ?? String(error)}`);
    return { status: "errored", message: `agent error: ${(error as Error).message}` };
  }
}
