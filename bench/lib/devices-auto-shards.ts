// The devices benchmark's second half (API.md §13 "Shards that fit a time budget"): a plan whose instrumentation
// step has `shards: "auto"`, `target_minutes: 10` and duration sharding, the 200-test suite of the shards
// benchmark (bench/data/junit-timings.json, Σ about 69 min) as its tests, history seeded through the agent API as
// an agent records it (as shard-history.ts does; each test's duration × a seeded log-normal factor), and one agent
// with enough stand-in devices online for the count the server picks. The measure: the execution's wall time,
// from its trigger to its finished_at, ÷ target_minutes.
//
// Ten real minutes per execution is too long for a benchmark, so the stand-ins run at a time scale (s < 1: a test
// of d device ms sleeps d·s real ms) and the wall time is read back in device time (real ÷ s), as
// shard-stand-in-run.ts does: processes (installs, `am instrument` starts) then cost ÷ s of device time, seconds
// at s = 0.1, as on a real device. The history is in device ms, the durations a real device would record.

import { readFile } from "node:fs/promises";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { createDeviceLab, type SuiteTest } from "../../packages/agent/test/stand-ins/device-lab.ts";
import { call } from "../../packages/server/test/harness.ts";
import type { CleanupScope } from "./cleanup.ts";
import {
  APP_VERSION,
  agentDevices,
  type DevicesServer,
  startBenchAgent,
  waitUntil,
} from "./devices-server.ts";
import { benchDir } from "./paths.ts";
import { logNormalFactor, seededRandom } from "./seeded-random.ts";
import type { HistoryTest } from "./shard-history.ts";

const TEST_PACKAGE = "com.example.basic.test";
const AGENT = "bench-auto-shards";

export interface AutoShardsOptions {
  targetMinutes: number;
  /** Stand-in devices the agent offers: at least the count the history asks for. */
  devices: number;
  /** Device ms → real ms. */
  timeScale: number;
  historyRuns: number;
  /** Measured executions, each with its own durations. */
  executions: number;
  sigma: number;
  scratch: string;
  log: (line: string) => void;
}

export interface AutoShardsExecution {
  status: string;
  /** Trigger to finished_at, in device ms (real ÷ time scale). */
  wallMs: number;
  /** First claim (started_at) to finished_at, device ms. */
  runningMs: number;
  shards: number;
  reason: string;
  /** Σ of this execution's test durations ÷ shards, device ms: the wall of a perfect split. */
  evenSplitMs: number;
  tests: number;
}

export interface AutoShardsOutcome {
  suiteMs: number;
  /** Σ of the tests' p80 over the history, as the planner reads it (device ms). */
  historyP80Ms: number;
  executions: AutoShardsExecution[];
}

/** The suite under Java names (an `-e testFile` line names a class and method), with its reported durations. */
async function loadSuite(): Promise<Array<{ class: string; method: string; ms: number }>> {
  const file = path.join(benchDir, "data/junit-timings.json");
  const { tests } = JSON.parse(await readFile(file, "utf8")) as { tests: Array<{ seconds: number }> };
  return tests.map((t, i) => ({
    class: `com.example.conformance.Suite${String(Math.floor(i / 10)).padStart(2, "0")}Test`,
    method: `case${i}`,
    ms: t.seconds * 1000,
  }));
}

function p80(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.ceil(0.8 * sorted.length) - 1] as number;
}

export async function measureAutoShards(
  server: DevicesServer,
  options: AutoShardsOptions,
  scope: CleanupScope,
): Promise<AutoShardsOutcome> {
  const { log, timeScale } = options;
  const suite = await loadSuite();
  const random = seededRandom(28);
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: server.ci,
    json: {
      name: "devices auto shards",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [
        {
          type: "instrumentation",
          shards: "auto",
          target_minutes: options.targetMinutes,
          max_shards: options.devices,
          sharding: "duration",
          record_video: "never",
          logcat: false,
        },
      ],
      timeout_seconds: 3600,
    },
  });
  if (plan.status !== 201) throw new Error(`plan: ${plan.status} ${JSON.stringify(plan.body)}`);

  // The history, before the measuring agent is online, its tests' durations in device ms.
  const agentToken = await call(`${server.baseUrl}/oauth/token`, {
    json: { ...server.agentCredentials, audience: server.audience },
  });
  if (agentToken.status !== 200) throw new Error(`agent token: ${agentToken.status}`);
  const headers = { ci: server.ci, agent: { "x-api-key": agentToken.body.access_token as string } };
  const history = new Map<string, number[]>();
  for (let i = 0; i < options.historyRuns; i++) {
    const tests = suite.map((t) => ({
      classname: t.class,
      name: t.method,
      durationMs: t.ms * logNormalFactor(random, options.sigma),
    }));
    for (const t of tests) {
      const key = `${t.classname}#${t.name}`;
      history.set(key, [...(history.get(key) ?? []), Math.round(t.durationMs)]);
    }
    await seedAutoExecution(server, headers, plan.body.id, tests);
  }
  const historyP80Ms = [...history.values()].reduce((sum, runs) => sum + p80(runs), 0);
  log(
    `${options.historyRuns} executions of history seeded: Σ p80 ${(historyP80Ms / 60_000).toFixed(1)} min of tests`,
  );

  const serials = Array.from({ length: options.devices }, (_, i) => `emulator-${5554 + 2 * i}`);
  const lab = await createDeviceLab({
    devices: serials.map((serial) => ({ serial, model: "Pixel 7" })),
    suites: {},
    timeScale,
  });
  scope.defer(() => lab.cleanup());
  const agent = startBenchAgent(
    server,
    {
      name: AGENT,
      scratch: options.scratch,
      args: ["--devices", "auto", "--concurrency", String(options.devices)],
      env: lab.env,
    },
    scope,
  );
  const agentLog = () => `agent log:\n${agent.output().slice(-4000)}`;
  await waitUntil(
    `${options.devices} devices online in GET /agents`,
    60_000,
    async () => (await agentDevices(server, AGENT)).length === options.devices,
    agentLog,
  );

  const targetMs = options.targetMinutes * 60_000;
  const executions: AutoShardsExecution[] = [];
  for (let e = 0; e < options.executions; e++) {
    const durations = suite.map((t) => Math.round(t.ms * logNormalFactor(random, options.sigma)));
    const tests: SuiteTest[] = suite.map((t, i) => ({
      class: t.class,
      method: t.method,
      outcome: "pass",
      duration_ms: durations[i],
    }));
    lab.setSuite(TEST_PACKAGE, { tests });
    const triggeredAt = Date.now();
    const started = performance.now();
    const triggered = await call(`${server.baseUrl}/testplan/run`, {
      headers: server.ci,
      json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: APP_VERSION },
    });
    if (triggered.status !== 200)
      throw new Error(`run: ${triggered.status} ${JSON.stringify(triggered.body)}`);
    const id = triggered.body.execution.id as string;
    // Three times the target (in real ms) is an execution that is stuck, and the bench says how.
    const view = await waitUntil(
      `execution ${id} to end`,
      3 * targetMs * timeScale + 60_000,
      async () => {
        const body = (await call(`${server.baseUrl}/executions/${id}`, { headers: server.ci })).body;
        return !["queued", "running"].includes(body.status) && body;
      },
      agentLog,
    );
    const finishedAt = Date.parse(view.finished_at);
    const devices = view.devices as Array<{ shards_planned?: { count: number; reason: string } | null }>;
    const planned = devices.find((d) => d.shards_planned)?.shards_planned;
    const shards = planned?.count ?? devices.length;
    const outcome: AutoShardsExecution = {
      status: view.status,
      wallMs: (finishedAt - triggeredAt) / timeScale,
      runningMs: (finishedAt - Date.parse(view.started_at)) / timeScale,
      shards,
      reason: planned?.reason ?? "(no shards_planned on the device runs)",
      evenSplitMs: durations.reduce((a, b) => a + b, 0) / shards,
      tests: view.summary?.tests ?? 0,
    };
    executions.push(outcome);
    log(
      `execution ${e + 1}: ${outcome.status}, ${outcome.tests} tests, ${shards} shards (${outcome.reason}), wall ${(outcome.wallMs / 60_000).toFixed(2)} min of device time (${((performance.now() - started) / 1000).toFixed(1)} s real)`,
    );
  }
  await agent.stop();
  return { suiteMs: suite.reduce((sum, t) => sum + t.ms, 0), historyP80Ms, executions };
}

interface HistoryJob {
  lease_id: string;
  device_run: { shard: number; shard_count: number };
}

/**
 * One finished execution of the auto plan, recorded through the agent API as shard-history.ts's seedExecution
 * does it (claim, test_case events, complete), except that the runs are counted first: an auto plan's count at a
 * history trigger depends on what was online then (the turnaround's agent, the seeding claims), so each run is
 * claimed on a serial of its own.
 */
async function seedAutoExecution(
  server: DevicesServer,
  headers: { ci: Record<string, string>; agent: Record<string, string> },
  planId: string,
  tests: readonly HistoryTest[],
): Promise<void> {
  const triggered = await call(`${server.baseUrl}/testplan/run`, {
    headers: headers.ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: APP_VERSION },
  });
  if (triggered.status !== 200) throw new Error(`history run: ${triggered.status}`);
  const id = triggered.body.execution.id as string;
  const runs = (await call(`${server.baseUrl}/executions/${id}`, { headers: headers.ci })).body.devices
    .length;
  for (let i = 0; i < runs; i++) {
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: headers.agent,
      json: {
        agent_id: "bench-history",
        devices: [{ serial: `history-${i + 1}`, platform: "android", model: "Pixel 7", os_version: "14" }],
        step_types: ["instrumentation"],
      },
    });
    if (claimed.status !== 200) throw new Error(`history claim: ${claimed.status}`);
    const job = claimed.body.job as HistoryJob;
    const { shard, shard_count: count } = job.device_run;
    const events = tests
      .filter((_, t) => t % count === shard)
      .map((test, seq) => ({
        seq,
        type: "test_case",
        step_index: 0,
        classname: test.classname,
        name: test.name,
        status: "passed",
        duration_ms: Math.round(test.durationMs),
      }));
    const sent = await call(`${server.baseUrl}/agent/jobs/${job.lease_id}/events`, {
      headers: headers.agent,
      json: { events },
    });
    if (sent.status !== 200) throw new Error(`history events: ${sent.status} ${JSON.stringify(sent.body)}`);
    const done = await call(`${server.baseUrl}/agent/jobs/${job.lease_id}/complete`, {
      headers: headers.agent,
      json: { status: "passed" },
    });
    if (done.status !== 200) throw new Error(`history complete: ${done.status}`);
  }
  const view = (await call(`${server.baseUrl}/executions/${id}`, { headers: headers.ci })).body;
  if (view.status !== "passed" || view.summary?.tests !== tests.length) {
    throw new Error(`history execution ${id}: ${view.status}, ${view.summary?.tests} tests`);
  }
}
