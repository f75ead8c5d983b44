/**
 * The test cases of an execution as people read them (GET /executions/{id}/tests): one item per test of
 * each device run, with its final status from the run's latest attempt and every attempt it had before.
 */
import { createHash } from "node:crypto";
import type { TestCaseStatus } from "../../db/schema.ts";
import type { DeviceRunRecord, ExecutionRecord } from "./executions.repo.ts";
import type { StoredTestCase } from "./results.repo.ts";

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
  attempts: Array<{
    attempt: number;
    status: TestCaseStatus;
    duration_ms: number | null;
    message: string | null;
  }>;
  artifacts: string[];
  video_offset_ms: number | null;
}

interface DeviceView {
  position: number;
  platform: string | null;
  serial: string | null;
  model: string | null;
  os_version: string | null;
}

/**
 * A test's identity within its plan, the same in every execution of the plan: what its history and (later)
 * quarantine are keyed by. Hashed so that any class and method name makes a short, URL-safe id.
 */
export function testId(testPlanId: string, classname: string, name: string): string {
  const digest = createHash("sha256").update(`${testPlanId}\u0000${classname}\u0000${name}`).digest("hex");
  return `t_${digest.slice(0, 24)}`;
}

const failing = (status: TestCaseStatus) => status === "failed" || status === "errored";

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
    for (const history of byTest.values()) {
      const latest = history.filter((c) => c.attempt === run.attempt);
      // A test of an earlier attempt only (the run was re-queued and this test did not come back) is history,
      // not a result of this execution.
      const final = latest.at(-1);
      if (!final) continue;
      const id = testId(execution.testPlanId, final.classname, final.name);
      views.push({
        id,
        classname: final.classname,
        name: final.name,
        status: final.status,
        flaky: final.status === "passed" && history.some((c) => failing(c.status)),
        quarantined: quarantined.has(id),
        duration_ms: final.durationMs,
        message: final.message,
        stack_trace: final.details,
        device: deviceView(run),
        shard: 0,
        attempt: final.attempt,
        attempts: history.map((c) => ({
          attempt: c.attempt,
          status: c.status,
          duration_ms: c.durationMs,
          message: c.message,
        })),
        artifacts: final.artifacts,
        video_offset_ms: final.videoOffsetMs,
      });
    }
  }
  return views;
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
