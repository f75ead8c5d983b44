/** Installs (or replaces) the app on a device with `adb install -r`, for steps that need it there. */
import { processOutcome } from "./process-outcome.ts";
import { runProcess } from "./process-runner.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";

export async function installApk(
  serial: string,
  apkPath: string,
  ctx: StepContext,
  timeoutMs: number,
): Promise<StepOutcome> {
  const lines: string[] = [];
  const result = await runProcess({
    command: "adb",
    args: ["-s", serial, "install", "-r", apkPath],
    cwd: ctx.workDir,
    env: process.env,
    timeoutMs,
    signal: ctx.signal,
    onLine: (stream, line) => {
      lines.push(line);
      ctx.log(stream, line);
    },
  });
  const ran = processOutcome(result, ctx, timeoutMs, "adb");
  // Old adb versions exit 0 even when the install failed, so the output is checked too.
  const failure = lines.find((line) => /Failure \[/.test(line) || /failed to install/.test(line));
  if (ran.status === "passed" && failure === undefined) return ran;
  if (ran.status === "cancelled" || result.timedOut || result.spawnError !== null) return ran;
  return { status: "errored", message: `adb install failed: ${installError(lines, failure, ran)}` };
}

/** "Failure [INSTALL_FAILED_…: …]" when adb printed one, else its last words. */
function installError(lines: readonly string[], failure: string | undefined, ran: StepOutcome): string {
  const bracket = failure?.match(/Failure \[.*\]/)?.[0];
  if (bracket !== undefined) return bracket;
  const last = [...lines].reverse().find((line) => line.trim() !== "");
  return failure ?? last ?? ran.message ?? "unknown error";
}
