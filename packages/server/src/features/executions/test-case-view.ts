/**
 * The test cases of an execution as people read them (GET /executions/{id}/tests): one item per test of
 * each device run, with its final status from the last try of the run's latest attempt, and every try it had:
 * on earlier attempts of the run, and within an attempt when the agent reran it alone (retry_failed_tests).
 */
import type { TestCaseStatus } from "../../db/schema.ts";
import { isFlaky } from "../device-runs/index.ts";
import { testId } from "../tests/test-id.ts";
import type { DeviceRunRecord, ExecutionRecord } from "./executions.repo.ts";
import type { StoredTestCase } from "./results.repo.ts";
import { testsOwnerOf } from "./tests-owner.ts";

export interface TestCaseView {
  id: string;
  classname: string;
  name: string;
  status: TestCaseStatus;
  flaky: boolean;
  quarantined: boolean;
  duration_ms: number | null;
  message: string | null;
  stack_trace: string | null;
  device: DeviceView;
  shard: number;
  attempt: number;
  attempts: TryView[];
  artifacts: string[];
  video_offset_ms: number | null;
}

/** One try of a test: on which attempt of the device run, which rerun within it, and what it captured. */
export interface TryView {
  attempt: number;
  /** 0 its first run in that attempt, 1.. its reruns alone there. */
  retry: number;
  status: TestCaseStatus;
  duration_ms: number | null;
  message: string | null;
  artifacts: string[];
}

interface DeviceView {
  position: number;
  platform: string | null;
  serial: string | null;
  model: string | null;
  os_version: string | null;
}

/** `quarantined`: the ids of the plan's tests quarantined now (GET /executions/{id}/tests shows them). */
export function testCaseViews(
  execution: ExecutionRecord,
  cases: readonly StoredTestCase[],
  quarantined: ReadonlySet<string> = new Set(),
): TestCaseView[] {
  const views: TestCaseView[] = [];
  for (const run of execution.deviceRuns) {
    const byTest = new Map<string, StoredTestCase[]>();
    for (const c of cases) {
      if (c.deviceRunId !== run.id) continue;
      const key = `${c.classname}\u0000${c.name}`;
      byTest.set(key, [...(byTest.get(key) ?? []), c]);
    }
    for (const reported of byTest.values()) {
      const history = inTryOrder(reported);
      const latest = history.filter((c) => c.attempt === run.attempt);
      // A test of an earlier attempt only (the run was re-queued and this test did not come back) is history,
      // not a result of this execution.
      const final = latest.at(-1);
      if (!final) continue;
      const id = testId(testsOwnerOf(execution), final.classname, final.name);
      views.push({
        id,
        classname: final.classname,
        name: final.name,
        status: final.status,
        // `final` is the last of `history`: flaky when it passed after failing (one definition, device-runs).
        flaky: isFlaky(history),
        quarantined: quarantined.has(id),
        duration_ms: final.durationMs,
        message: final.message,
        stack_trace: final.details,
        device: deviceView(run),
        shard: run.shard ?? 0,
        attempt: final.attempt,
        attempts: history.map((c) => ({
          attempt: c.attempt,
          retry: c.retry,
          status: c.status,
          duration_ms: c.durationMs,
          message: c.message,
          artifacts: c.artifacts,
        })),
        artifacts: final.artifacts,
        video_offset_ms: final.videoOffsetMs,
      });
    }
  }
  return views;
}

/**
 * One test's results by attempt, then by try within it. Agents that did not number their tries (older ones,
 * or steps without reruns) are taken in the order they reported them.
 */
export function inTryOrder(reported: readonly StoredTestCase[]): Array<StoredTestCase & { retry: number }> {
  const seen = new Map<number, number>();
  const numbered = reported.map((c, order) => {
    const index = seen.get(c.attempt) ?? 0;
    seen.set(c.attempt, index + 1);
    return { ...c, retry: c.retry ?? index, order };
  });
  numbered.sort((a, b) => a.attempt - b.attempt || a.retry - b.retry || a.order - b.order);
  return numbered.map(({ order: _, ...c }) => c);
}

function deviceView(run: DeviceRunRecord): DeviceView {
  const device = run.claimedDevice ?? run.device;
  const text = (key: string) => (typeof device?.[key] === "string" ? (device[key] as string) : null);
  return {
    position: run.position,
    platform: text("platform"),
    serial: text("serial"),
    model: text("model"),
    os_version: text("os_version"),
  };
}
