/**
 * The shell step: runs the plan's command with /bin/sh in the step's work directory, then, when asked,
 * ingests the JUnit reports it wrote. Exit code 0 passes, anything else fails; a timeout errors; a cancel
 * cancels.
 */
import type { ShellStep } from "@testbay/client";
import { checkJUnitPattern, findJUnitFiles } from "../junit/junit-glob.ts";
import { ingestJUnitFiles } from "./ingest-junit.ts";
import { appNamed } from "./named-binary.ts";
import { abortMessage, worstOutcome } from "./outcome.ts";
import { processOutcome, stepTimeoutMs } from "./process-outcome.ts";
import { runProcess } from "./process-runner.ts";
import type { StepContext, StepOutcome } from "./step-types.ts";

export async function runShellStep(step: ShellStep, ctx: StepContext): Promise<StepOutcome> {
  if (ctx.signal.aborted) return { status: "cancelled", message: abortMessage(ctx.signal) };
  // A bad pattern is the plan's mistake: say so before spending the step's time on the command.
  const badPattern = step.junit === undefined ? null : checkJUnitPattern(step.junit);
  if (badPattern !== null) return { status: "errored", message: badPattern };

  let appPath: string;
  try {
    // Named as its format (`com.example.shop.apk`), so a script can hand it to adb or bundletool as it is.
    appPath = await appNamed(await ctx.appPath(), ctx.workDir, ctx.packageName, ctx.binary.format);
  } catch (error) {
    return { status: "errored", message: `could not fetch the binary: ${(error as Error).message}` };
  }

  const timeoutMs = stepTimeoutMs(step, ctx);
  const result = await runProcess({
    command: "/bin/sh",
    args: ["-c", step.run],
    cwd: ctx.workDir,
    env: shellEnv(ctx, appPath),
    timeoutMs,
    signal: ctx.signal,
    onLine: (stream, line) => ctx.log(stream, line),
  });
  const ran = processOutcome(result, ctx, timeoutMs, "/bin/sh");
  // Reports of a cancelled or timed-out command are half-written at best.
  if (step.junit === undefined || result.aborted || result.timedOut || result.spawnError !== null) return ran;

  const files = await findJUnitFiles(step.junit, ctx.workDir);
  if (files.length === 0) {
    ctx.log("agent", `junit: no file matches ${step.junit} in ${ctx.workDir}`);
    const noFile: StepOutcome = { status: "failed", message: "junit glob matched no file" };
    return { ...worstOutcome(ran, noFile), exit_code: ran.exit_code ?? null };
  }
  const reported = await ingestJUnitFiles(files, ctx);
  return { ...worstOutcome(ran, reported), exit_code: ran.exit_code ?? null };
}

/** The agent's own env, then the execution's, then what Testbay promises every shell step. */
export function shellEnv(ctx: StepContext, appPath: string): NodeJS.ProcessEnv {
  return {
    ...withoutAgentSecrets(process.env),
    ...ctx.env,
    TESTBAY_APP_PATH: appPath,
    TESTBAY_PACKAGE: ctx.packageName,
    TESTBAY_VERSION: ctx.version,
    TESTBAY_DEVICE_SERIAL: ctx.device?.serial ?? "",
    TESTBAY_ARTIFACTS_DIR: ctx.artifactsDir,
  };
}

/** The agent's own credentials are not the step's business: a plan's script must not see them. */
const agentSecrets = ["TESTBAY_CLIENT_ID", "TESTBAY_CLIENT_SECRET", "TESTBAY_TOKEN"];

export function withoutAgentSecrets(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  const copy = { ...env };
  for (const name of agentSecrets) delete copy[name];
  return copy;
}
