/**
 * The maestro step: writes the plan's flows into the work directory, runs them with the maestro CLI
 * (on the job's device when there is one) and ingests the JUnit report maestro writes.
 */
import { existsSync } from "node:fs";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { MaestroStep } from "@testbay/client";
import { ingestJUnitFiles } from "./ingest-junit.ts";
import { abortMessage } from "./outcome.ts";
import { processOutcome, stepTimeoutMs } from "./process-outcome.ts";
import { runProcess } from "./process-runner.ts";
import { withoutAgentSecrets } from "./shell-step.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";

export const MAESTRO_REPORT = "maestro-report.xml";

export async function runMaestroStep(step: MaestroStep, ctx: StepContext): Promise<StepOutcome> {
  if (ctx.signal.aborted) return { status: "cancelled", message: abortMessage(ctx.signal) };
  const flowsDir = await writeFlows(step.flows, ctx.workDir);
  const report = join(ctx.workDir, MAESTRO_REPORT);
  const timeoutMs = stepTimeoutMs(step, ctx);
  const result = await runProcess({
    command: "maestro",
    args: maestroArgs(ctx.device?.serial ?? null, report, flowsDir),
    cwd: ctx.workDir,
    // The execution's env too: maestro passes MAESTRO_* variables on to the flows.
    env: { ...withoutAgentSecrets(process.env), ...ctx.env, MAESTRO_CLI_NO_ANALYTICS: "1" },
    timeoutMs,
    signal: ctx.signal,
    onLine: (stream, line) => ctx.log(stream, line),
  });
  const ran = processOutcome(result, ctx, timeoutMs, "maestro");
  if (ran.status === "cancelled" || result.timedOut || result.spawnError !== null) return ran;
  if (!existsSync(report)) {
    return {
      status: "errored",
      message: `maestro wrote no report (${ran.message ?? "exit code 0"})`,
      exit_code: ran.exit_code ?? null,
    };
  }
  const reported = await ingestJUnitFiles([report], ctx);
  if (reported.status !== "passed") return { ...reported, exit_code: ran.exit_code ?? null };
  if (ran.status !== "passed") {
    return {
      status: "errored",
      message: `maestro ended with ${ran.message} but reported no failed flow`,
      exit_code: ran.exit_code ?? null,
    };
  }
  return ran;
}

/** `maestro [--device SERIAL] test --format junit --output REPORT FLOWS_DIR` (--device is a global option). */
export function maestroArgs(serial: string | null, report: string, flowsDir: string): string[] {
  const device = serial === null ? [] : ["--device", serial];
  return [...device, "test", "--format", "junit", "--output", report, flowsDir];
}

/** Writes flows/flow-01.yaml, flow-02.yaml… numbered in the plan's order; returns the folder. */
export async function writeFlows(flows: readonly string[], workDir: string): Promise<string> {
  const dir = join(workDir, "flows");
  await mkdir(dir, { recursive: true });
  for (const [index, flow] of flows.entries()) {
    await writeFile(join(dir, `flow-${String(index + 1).padStart(2, "0")}.yaml`), flow);
  }
  return dir;
}
