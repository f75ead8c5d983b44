/**
 * A maestro step split over shards (API.md §5 `shards`). Its tests are its flows, and maestro's report names a
 * flow by its config's `name`, else by its file name without the extension (maestro's TestSuiteInteractor), so
 * the flows are listed to the server under those names, and every batch the server hands out is run as a folder
 * holding just its flows: one maestro process per batch, whose report holds that batch only. A batch's flows are
 * reported before the next batch is taken, so a device lost later hands back only what it had not reported.
 * With retry_failed_tests, a failed flow is run again alone (as without shards: maestro-retries.ts).
 */
import { copyFile, mkdir } from "node:fs/promises";
import { basename, extname, join } from "node:path";
import type { ShardBatch } from "@testbay/client";
import { parseAllDocuments } from "yaml";
import { readJUnitFile } from "../junit/read-junit-file.ts";
import { abortMessage } from "./outcome.ts";
import type { ProcessResult } from "./process-runner.ts";
import { lastTries, type Rerun, retryFailedTests } from "./retry-failed-tests.ts";
import { type BatchesDone, type BatchRan, runShardBatches } from "./shard-batches.ts";
import type { ShardContext, StepContext, StepOutcome, TestCase } from "./step-types.ts";

/** The name maestro reports a flow under: its config document's `name`, else its file's base name. */
export function flowName(flow: string, file: string): string {
  const documents = parseAllDocuments(flow);
  // A flow is a config document, `---`, then its commands; a flow of commands alone has no config.
  if (Array.isArray(documents) && documents.length > 1) {
    const config: unknown = documents[0]?.toJS();
    const name = (config as { name?: unknown } | null)?.name;
    if (typeof name === "string" && name !== "") return name;
  }
  return basename(file, extname(file));
}

export interface FlowBatches {
  ctx: StepContext;
  shard: ShardContext;
  /** The flow files in the plan's order, and their texts. */
  files: readonly string[];
  flows: readonly string[];
  retries: number;
  /** Runs maestro on a flow file or folder, writing its JUnit report to `report`. */
  runMaestro(target: string, report: string): Promise<{ result: ProcessResult; ran: StepOutcome }>;
  reportPath(label: string): string;
  /** Whether the device is still there (null: maestro picked the device, nothing to check). */
  devicePresent: (() => Promise<boolean>) | null;
  lost(message: string): StepOutcome;
  /** The artifacts a failed flow names (the step's device log: maestro's results come only at the end). */
  failureArtifacts: readonly string[];
}

export interface FlowBatchesDone extends BatchesDone {
  /** Each flow's last try, in the order reported. */
  final: TestCase[];
}

type Ran = { stop: StepOutcome } | { cases: TestCase[] };

/**
 * Lists the flows, then runs the batches the server hands out until none is left. Null `final` entries never
 * happen: a flow the report does not name is reported `errored` ("did not run").
 */
export async function runFlowBatches(options: FlowBatches): Promise<FlowBatchesDone | { stop: StepOutcome }> {
  const { ctx, files, flows, retries } = options;
  const fileOf = new Map<string, string>();
  for (const [index, file] of files.entries()) {
    const name = flowName(flows[index] ?? "", file);
    if (fileOf.has(name)) {
      return {
        stop: {
          status: "errored",
          message: `two flows are named ${JSON.stringify(name)}: give each flow its own config name to split them over shards`,
        },
      };
    }
    fileOf.set(name, file);
  }
  const reported: TestCase[] = [];
  const report = (testCase: TestCase) => {
    const failed = testCase.status === "failed" || testCase.status === "errored";
    const named = failed ? { ...testCase, artifacts: [...options.failureArtifacts] } : testCase;
    ctx.testCase(named);
    reported.push(named);
  };

  const runMaestro = async (target: string, label: string, expected: readonly string[]): Promise<Ran> => {
    const reportFile = options.reportPath(label);
    const { result, ran } = await options.runMaestro(target, reportFile);
    if (ran.status === "cancelled" || result.timedOut || result.spawnError !== null) return { stop: ran };
    if (ran.status !== "passed" && options.devicePresent && !(await options.devicePresent())) {
      return { stop: options.lost(`during the flows of ${label}`) };
    }
    const parsed = await readJUnitFile(reportFile);
    const cases = parsed.ok ? parsed.testCases : [];
    const why = parsed.ok
      ? "maestro's report does not name it"
      : `maestro wrote no readable report (${ran.message ?? parsed.error})`;
    const seen = new Set(cases.map((c) => c.name));
    const missing = expected.filter((name) => !seen.has(name));
    return {
      cases: [
        ...cases.filter((c) => expected.includes(c.name)),
        ...missing.map((name) => didNotRun(name, why)),
      ],
    };
  };

  const runBatch = async (batch: ShardBatch): Promise<BatchRan> => {
    if (ctx.signal.aborted) return { stop: { status: "cancelled", message: abortMessage(ctx.signal) } };
    const names = batch.tests.map((test) => test.name);
    const dir = join(ctx.workDir, `flows-batch-${batch.id}`);
    await mkdir(dir, { recursive: true });
    for (const name of names) {
      const file = fileOf.get(name);
      // A flow the plan's listing had that this step does not: the server's plan is what runs (never here).
      if (file !== undefined) await copyFile(file, join(dir, basename(file)));
    }
    const first = await runMaestro(dir, `batch-${batch.id}`, names);
    if ("stop" in first) return first;
    const tries = first.cases.map((c) => (retries > 0 ? { ...c, retry: 0 } : c));
    for (const testCase of tries) report(testCase);
    if (retries === 0) return { ran: true };
    const done = await retryFailedTests(tries, retries, async (test, retry): Promise<Rerun> => {
      const file = fileOf.get(test.name);
      if (file === undefined)
        return { tried: { ...didNotRun(test.name, "no such flow in this step"), retry } };
      ctx.log("agent", `running flow ${test.name} again alone (retry ${retry} of ${retries})`);
      const label = `${basename(file, extname(file))}-retry-${retry}`;
      const rerun = await runMaestro(file, label, [test.name]);
      if ("stop" in rerun) return rerun;
      const tried = {
        ...(rerun.cases[0] ?? didNotRun(test.name, "maestro's report does not name it")),
        retry,
      };
      report(tried);
      return { tried };
    });
    return done.stopped ? { stop: done.stopped } : { ran: true };
  };

  const listed = [...fileOf.keys()].map((name) => ({ classname: name, name }));
  const done = await runShardBatches(options.shard, listed, (line) => ctx.log("agent", line), runBatch);
  return { ...done, final: [...lastTries(reported).values()] };

  function didNotRun(name: string, why: string): TestCase {
    return {
      classname: name,
      name,
      status: "errored",
      duration_ms: null,
      message: `did not run: ${why}`,
      details: null,
    };
  }
}
