/**
 * A plan's tests over its last finished executions (GET /tests): how often each ran, failed and was flaky,
 * how long it takes, and how it ended last. One pass over the final test cases of the window.
 */
import type { TestCaseStatus } from "../../db/schema.ts";
import type { FinalTestCase, WindowExecution } from "./test-history.repo.ts";
import { testId } from "./test-id.ts";

export interface TestHistory {
  id: string;
  classname: string;
  name: string;
  /** Executions of the window it ran in. */
  runs: number;
  /** Executions whose final status for it was failed or errored (on any of their devices). */
  failures: number;
  /** Executions where it passed in the end after failing on an earlier attempt or try. */
  flaky_runs: number;
  flaky_rate: number;
  p50_ms: number | null;
  p80_ms: number | null;
  last_status: TestCaseStatus;
  /** The execution `last_status` comes from: the newest of the window it ran in. */
  last_execution_id: string;
  last_run_at: string;
  first_seen_at: string;
  new: boolean;
}

const failing = (status: TestCaseStatus) => status === "failed" || status === "errored";

/** Which of a test's results on several devices of one execution tells the most: a failure over a pass. */
const telling: Record<TestCaseStatus, number> = { failed: 3, errored: 2, passed: 1, skipped: 0 };

interface Tally {
  classname: string;
  name: string;
  /** Index in the window (0 = newest) of the executions it ran in, and its status there. */
  byExecution: Map<number, { status: TestCaseStatus; flaky: boolean }>;
  durations: number[];
}

/** The value below which `share` of the sorted durations fall (nearest rank). */
export function percentile(sorted: readonly number[], share: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.max(0, Math.ceil(share * sorted.length) - 1)] ?? null;
}

export function testHistories(
  testPlanId: string,
  window: readonly WindowExecution[],
  cases: readonly FinalTestCase[],
): TestHistory[] {
  const position = new Map(window.map((execution, i) => [execution.id, i]));
  const tallies = new Map<string, Tally>();
  for (const c of cases) {
    const index = position.get(c.executionId);
    if (index === undefined) continue;
    const key = `${c.classname}\u0000${c.name}`;
    let tally = tallies.get(key);
    if (!tally) {
      tally = { classname: c.classname, name: c.name, byExecution: new Map(), durations: [] };
      tallies.set(key, tally);
    }
    const flaky = c.status === "passed" && c.failedBefore;
    const seen = tally.byExecution.get(index);
    if (!seen) tally.byExecution.set(index, { status: c.status, flaky });
    else {
      if (telling[c.status] > telling[seen.status]) seen.status = c.status;
      seen.flaky ||= flaky;
    }
    // Skipped tests take no time worth predicting a shard's length from.
    if (c.durationMs !== null && c.status !== "skipped") tally.durations.push(c.durationMs);
  }

  const histories: TestHistory[] = [];
  for (const tally of tallies.values()) {
    const indexes = [...tally.byExecution.keys()];
    const newest = Math.min(...indexes);
    const oldest = Math.max(...indexes);
    const results = [...tally.byExecution.values()];
    const runs = results.length;
    const flakyRuns = results.filter((r) => r.flaky && !failing(r.status)).length;
    const durations = tally.durations.sort((a, b) => a - b);
    // biome-ignore lint/style/noNonNullAssertion: newest and oldest are indexes of the window by construction
    const [last, first] = [window[newest]!, window[oldest]!];
    histories.push({
      id: testId(testPlanId, tally.classname, tally.name),
      classname: tally.classname,
      name: tally.name,
      runs,
      failures: results.filter((r) => failing(r.status)).length,
      flaky_runs: flakyRuns,
      flaky_rate: Math.round((flakyRuns / runs) * 1000) / 1000,
      p50_ms: percentile(durations, 0.5),
      p80_ms: percentile(durations, 0.8),
      // biome-ignore lint/style/noNonNullAssertion: newest is a key of byExecution
      last_status: tally.byExecution.get(newest)!.status,
      last_execution_id: last.id,
      last_run_at: last.createdAt,
      first_seen_at: first.createdAt,
      new: oldest === 0 && window.length > 0,
    });
  }
  return histories.sort(byFailuresThenName);
}

type Ordered = Pick<TestHistory, "id" | "classname" | "name" | "failures">;

/** Most failures first, then by name: the order of the list. */
export function byFailuresThenName(a: Ordered, b: Ordered): number {
  return (
    b.failures - a.failures ||
    compareText(a.name, b.name) ||
    compareText(a.classname, b.classname) ||
    compareText(a.id, b.id)
  );
}

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
