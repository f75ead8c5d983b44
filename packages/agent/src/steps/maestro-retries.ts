/**
 * retry_failed_tests in the maestro step. maestro names a flow in its report by the flow's `name` (or its
 * file name), which cannot be traced back to a file reliably when it runs a whole folder; so with retries each
 * flow runs alone, one maestro process per flow (its report holds that flow only), and a flow that failed is
 * run again alone up to N times, stopping at its first pass (retry-failed-tests.ts). Every try is reported
 * with its `retry`; the failed ones name the step's whole device log and the video kept, as without retries
 * (maestro's results come at the end of each run, so there is no moment of failure to cut them at).
 */
import { existsSync } from "node:fs";
import { basename } from "node:path";
import type { Captures } from "../android/device-captures.ts";
import { failing } from "../android/device-captures.ts";
import { testKey } from "../android/logcat-cut.ts";
import { readJUnitFile } from "../junit/read-junit-file.ts";
import { testCasesOutcome } from "./outcome.ts";
import type { ProcessResult } from "./process-runner.ts";
import { type Rerun, retryFailedTests } from "./retry-failed-tests.ts";
import type { StepContext, StepOutcome, TestCase } from "./step-types.ts";

export interface FlowRetries {
  ctx: StepContext;
  captures: Captures | null;
  /** The flow files, in the plan's order. */
  files: readonly string[];
  retries: number;
  /** Runs maestro on one flow file, writing its JUnit report to `report`. */
  runMaestro(file: string, report: string): Promise<{ result: ProcessResult; ran: StepOutcome }>;
  /** The report path for one run: "…/maestro-report-flow-02-retry-1.xml". */
  reportPath(label: string): string;
  /** Whether the device is still there (null: maestro picked the device, nothing to check). */
  devicePresent: (() => Promise<boolean>) | null;
  lost(message: string): StepOutcome;
}

type Ran = { stop: StepOutcome } | { cases: TestCase[] };

export async function runFlowsWithRetries(options: FlowRetries): Promise<StepOutcome> {
  const { ctx, captures, files, retries } = options;
  const tries: TestCase[] = [];
  const fileOf = new Map<string, string>();

  const runAlone = async (file: string, label: string): Promise<Ran> => {
    const report = options.reportPath(label);
    const { result, ran } = await options.runMaestro(file, report);
    if (ran.status === "cancelled" || result.timedOut || result.spawnError !== null) return { stop: ran };
    if (ran.status !== "passed" && options.devicePresent && !(await options.devicePresent())) {
      return { stop: options.lost(`during flow ${basename(file)}`) };
    }
    if (!existsSync(report)) {
      return {
        stop: {
          status: "errored",
          message: `maestro wrote no report for ${basename(file)} (${ran.message ?? "exit code 0"})`,
          exit_code: ran.exit_code ?? null,
        },
      };
    }
    const parsed = await readJUnitFile(report);
    if (!parsed.ok) {
      return { stop: { status: "errored", message: `could not read maestro's report: ${parsed.error}` } };
    }
    return { cases: parsed.testCases };
  };

  let stopped: StepOutcome | null = null;
  for (const file of files) {
    const label = basename(file).replace(/\.ya?ml$/, "");
    const ran = await runAlone(file, label);
    if ("stop" in ran) {
      stopped = ran.stop;
      break;
    }
    for (const testCase of ran.cases) {
      fileOf.set(testKey(testCase.classname, testCase.name), file);
      tries.push({ ...testCase, retry: 0 });
    }
  }
  let final = tries;
  if (stopped === null) {
    const done = await retryFailedTests([...tries], retries, async (test, retry): Promise<Rerun> => {
      const key = testKey(test.classname, test.name);
      const file = fileOf.get(key);
      if (file === undefined) throw new Error(`no flow file for ${key}`);
      ctx.log("agent", `running flow ${test.name} again alone (retry ${retry} of ${retries})`);
      const ran = await runAlone(file, `${basename(file).replace(/\.ya?ml$/, "")}-retry-${retry}`);
      if ("stop" in ran) return ran;
      const found = ran.cases.find((c) => testKey(c.classname, c.name) === key);
      const tried: TestCase = found
        ? { ...found, retry }
        : {
            ...test,
            status: "errored",
            duration_ms: null,
            message: `did not run: maestro's report of ${basename(file)} has no flow named ${test.name}`,
            details: null,
            retry,
          };
      tries.push(tried);
      return { tried };
    });
    stopped = done.stopped;
    final = done.final;
  }

  await captures?.stop();
  if (stopped?.deviceLost) {
    // Handed back to run again: nothing of this run is reported.
    await captures?.collect(false, [], false);
    return stopped;
  }
  const kept = (await captures?.collect(tries.some(failing) || stopped !== null, [], false)) ?? [];
  const captured = [...(captures?.logcatArtifact ? [captures.logcatArtifact] : []), ...kept];
  for (const testCase of tries)
    ctx.testCase(failing(testCase) ? { ...testCase, artifacts: captured } : testCase);
  return stopped ?? testCasesOutcome(final);
}
