// The history a `duration` plan is made from, seeded for the shards benchmark through the agent API, as an
// agent would record it: the bench claims each shard's job of an execution of the plan, reports its share of
// the tests as test_case events with the durations a device took, and completes it passed. Nothing runs on a
// device, so the history costs seconds instead of minutes of device time; the planner reads it exactly as it
// reads the history of executions that ran (the test history's p80 over the plan's finished executions).

import { call, type TestServer } from "../../packages/server/test/harness.ts";

export interface HistoryTest {
  classname: string;
  name: string;
  /** What the device took, in device ms. */
  durationMs: number;
}

interface Job {
  lease_id: string;
  device_run: { shard: number; shard_count: number };
}

/** Events per call, below the agent API's limit of 1000. */
const eventsPerCall = 500;

/**
 * One finished execution of `planId` (version `version` of com.example.basic), its device entry's `shards`
 * runs claimed on devices named like `serials` and passed with `tests` reported, dealt round-robin.
 */
export async function seedExecution(
  server: TestServer,
  headers: { ci: Record<string, string>; agent: Record<string, string> },
  planId: string,
  version: string,
  serials: readonly string[],
  tests: readonly HistoryTest[],
): Promise<string> {
  const run = await call(`${server.baseUrl}/testplan/run`, {
    headers: headers.ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version },
  });
  if (run.status !== 200) throw new Error(`history run: ${run.status} ${JSON.stringify(run.body)}`);
  const executionId = run.body.execution.id as string;
  const jobs: Job[] = [];
  for (const serial of serials) {
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: headers.agent,
      json: {
        agent_id: "bench-history",
        devices: [{ serial, platform: "android", model: "Pixel 7", os_version: "14" }],
        step_types: ["instrumentation"],
      },
    });
    if (claimed.status !== 200) throw new Error(`history claim: ${claimed.status}`);
    jobs.push(claimed.body.job as Job);
  }
  for (const job of jobs) {
    const { shard, shard_count: count } = job.device_run;
    const events = tests
      .filter((_, i) => i % count === shard)
      .map((test, seq) => ({
        seq,
        type: "test_case",
        step_index: 0,
        classname: test.classname,
        name: test.name,
        status: "passed",
        duration_ms: Math.round(test.durationMs),
      }));
    for (let i = 0; i < events.length; i += eventsPerCall) {
      const sent = await call(`${server.baseUrl}/agent/jobs/${job.lease_id}/events`, {
        headers: headers.agent,
        json: { events: events.slice(i, i + eventsPerCall) },
      });
      if (sent.status !== 200) throw new Error(`history events: ${sent.status} ${JSON.stringify(sent.body)}`);
    }
    const done = await call(`${server.baseUrl}/agent/jobs/${job.lease_id}/complete`, {
      headers: headers.agent,
      json: { status: "passed" },
    });
    if (done.status !== 200) throw new Error(`history complete: ${done.status} ${JSON.stringify(done.body)}`);
  }
  const view = (await call(`${server.baseUrl}/executions/${executionId}`, { headers: headers.ci })).body;
  if (view.status !== "passed" || view.summary?.tests !== tests.length) {
    throw new Error(`history execution ${executionId}: ${view.status}, ${view.summary?.tests} tests`);
  }
  return executionId;
}
