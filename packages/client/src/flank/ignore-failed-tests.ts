import { ExitCode } from "../cli/exit-codes.ts";
import type { Execution } from "../sdk/models.ts";

/**
 * Flank's `ignore-failed-tests: true`: failed tests end the command with 0. Only failed tests: a run that
 * errored (infrastructure) or was cancelled still exits 1, and every other code (gave up, did not start) is
 * kept, so a pipeline does not go green on a run that never tested anything.
 */
export function exitCodeIgnoringFailedTests(
  code: ExitCode,
  executions: Execution[],
  ignore: boolean,
): ExitCode {
  if (!ignore || code !== ExitCode.testsFailed) return code;
  const onlyTestFailures = executions.every((e) => e.status === "passed" || e.status === "failed");
  return onlyTestFailures ? ExitCode.ok : code;
}
