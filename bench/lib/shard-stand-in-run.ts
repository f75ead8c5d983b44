// The shards benchmark on the real thing: a Testbay server (in this process, SQLite), one `testbay-agent`
// process and 4 stand-in devices, running a 4-shard instrumentation step of the 200-test suite through the
// sharding protocol. Device time is shortened by FAKE_ADB_TIME_SCALE; each run's tests take their durations
// × a seeded log-normal factor, as in the simulation. Wall time is read from the devices' own logs: from the
// first test started in a batch to the last test finished, on any device.
//
// What it models: a stand-in at time scale s is a device s⁻¹ times as fast as a real one at its tests, but not
// at its processes: an `adb push` and an `am instrument` start cost the stand-in a few hundred real ms, which
// is s⁻¹ times that in device time. At s = 0.1 that is a few seconds, as an `am instrument` start on a real
// device is (~1–3 s, what the planner assumes); at 0.02 it was tens of seconds, a device no one has. So every
// time here is device time (real ms ÷ s): the history is seeded as a real device would have recorded it
// (the suite's durations, not shrunk), through the agent API (shard-history.ts) instead of run, and the
// planner's 2 s runner start is then 2 s of the same clock as the durations it plans with.

import type { ChildProcess } from "node:child_process";
import { writeFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { startAgentProcess, stopAgentProcesses } from "../../packages/agent/test/agent-process.ts";
import {
  createDeviceLab,
  type DeviceLab,
  type SuiteTest,
} from "../../packages/agent/test/stand-ins/device-lab.ts";
import {
  call,
  registerBasicApp,
  startTestServer,
  uploadBasicTestPackage,
} from "../../packages/server/test/harness.ts";
import { logNormalFactor, seededRandom } from "./seeded-random.ts";
import { seedExecution } from "./shard-history.ts";
import { idealMs } from "./shard-simulation.ts";
import { median } from "./stats.ts";

const TEST_PACKAGE = "com.example.basic.test";
const SERIALS = ["emulator-5554", "emulator-5556", "emulator-5558", "emulator-5560"];

export interface StandInRunOptions {
  /** Device ms → real ms. */
  timeScale: number;
  /** Executions of the duration plan before the measured ones, for its history (seeded, not run). */
  historyRuns: number;
  /** Real ms the measured executions may take in all; one that would not fit is left out, and says so. */
  budgetMs: number;
  sigma: number;
  log: (line: string) => void;
}

export interface StandInOutcome {
  /** Left out: the bench's time budget would not hold it (then every measure is 0). */
  skipped?: string;
  deviceSet: "equal" | "slow";
  sharding: "duration" | "uniform";
  /** First test started to last test finished, on any device (real ms). */
  wallMs: number;
  /** max(Σ durations ÷ Σ speeds, longest ÷ fastest), of this run's durations (real ms). */
  idealMs: number;
  /** The execution, from trigger to finished as the bench saw it (real ms). */
  executionMs: number;
  /**
   * The median gap on a device between one batch's last test and the next one's first (real ms): the cost
   * of a batch beyond its tests as the stand-ins had it (NaN with one batch per device).
   */
  batchGapMs: number;
  /** `am instrument -e testFile` runs: the batches run (a batch handed on after a lost device counts twice). */
  batches: number;
  status: string;
  summaryTests: number;
}

const emptyOutcome = { wallMs: 0, batchGapMs: 0, idealMs: 0, executionMs: 0, batches: 0, summaryTests: 0 };

/**
 * The suite as an instrumentation test package: the timings' tests under Java names (the data file's are
 * Kubernetes descriptions, which no testFile line could name), with their reported durations.
 */
function javaSuite(seconds: readonly number[]) {
  return seconds.map((s, i) => ({
    class: `com.example.conformance.Suite${String(Math.floor(i / 10)).padStart(2, "0")}Test`,
    method: `case${i}`,
    ms: s * 1000,
  }));
}

export async function runOnStandIns(
  seconds: readonly number[],
  options: StandInRunOptions,
): Promise<StandInOutcome[]> {
  const { log, timeScale } = options;
  const suite = javaSuite(seconds);
  const random = seededRandom(1);
  const server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "1000000", TESTBAY_AGENT_RATE_LIMIT_BURST: "1000000" },
  });
  const scratch = await mkdtemp(path.join(tmpdir(), "testbay-bench-shards-"));
  const running: ChildProcess[] = [];
  let lab: DeviceLab | undefined;
  try {
    const ci = { "x-api-key": await server.token(await server.createClient("bench", "ci")) };
    const agentCredentials = await server.createClient("bench", "agent");
    await registerBasicApp(server, ci, "1.0.0");
    await uploadBasicTestPackage(server, ci, "1.0.0");
    const plans: Record<"duration" | "uniform", string> = { duration: "", uniform: "" };
    for (const sharding of ["duration", "uniform"] as const) {
      const plan = await call(`${server.baseUrl}/testplans`, {
        headers: ci,
        json: {
          name: `shards ${sharding}`,
          package_name: "com.example.basic",
          devices: [{ platform: "android", model: "Pixel 7" }],
          steps: [{ type: "instrumentation", shards: 4, sharding, record_video: "never", logcat: false }],
          timeout_seconds: 3600,
        },
      });
      if (plan.status !== 201) throw new Error(`plan: ${plan.status} ${JSON.stringify(plan.body)}`);
      plans[sharding] = plan.body.id;
    }
    // The history, before any agent is there to claim its jobs: each execution's durations in device ms.
    const agent = { "x-api-key": await server.token(agentCredentials) };
    for (let i = 0; i < options.historyRuns; i++) {
      const started = performance.now();
      const history = suite.map((t) => ({
        classname: t.class,
        name: t.method,
        durationMs: t.ms * logNormalFactor(random, options.sigma),
      }));
      await seedExecution(server, { ci, agent }, plans.duration, "1.0.0", SERIALS, history);
      log(
        `history execution ${i + 1}/${options.historyRuns} seeded in ${Math.round(performance.now() - started)} ms`,
      );
    }
    lab = await createDeviceLab({
      devices: SERIALS.map((serial) => ({ serial, model: "Pixel 7" })),
      suites: {},
      timeScale,
    });
    const theLab = lab;
    const agentProcess = startAgentProcess({
      name: "bench-rack",
      baseUrl: server.baseUrl,
      audience: server.config.audience,
      credentials: agentCredentials,
      scratch,
      args: ["--devices", "auto", "--concurrency", String(SERIALS.length)],
      env: lab.env,
      running,
    });

    /** One execution of `sharding`'s plan with this run's durations; its measures once it finished. */
    const execute = async (
      sharding: "duration" | "uniform",
      deviceSet: "equal" | "slow",
      limitMs: number,
    ) => {
      const durations = suite.map((t) => Math.round(t.ms * logNormalFactor(random, options.sigma)));
      const tests: SuiteTest[] = suite.map((t, i) => ({
        class: t.class,
        method: t.method,
        outcome: "pass",
        duration_ms: durations[i],
      }));
      theLab.setSuite(TEST_PACKAGE, { tests });
      const callsBefore = theLab.calls().length;
      const started = performance.now();
      const run = await call(`${server.baseUrl}/testplan/run`, {
        headers: ci,
        json: { test_plan_id: plans[sharding], package_name: "com.example.basic", version: "1.0.0" },
      });
      if (run.status !== 200) throw new Error(`run: ${run.status} ${JSON.stringify(run.body)}`);
      const id = run.body.execution.id as string;
      let view: { status: string; summary: { tests: number } | null };
      for (;;) {
        view = (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body;
        if (!["queued", "running"].includes(view.status)) break;
        if (performance.now() - started > limitMs) {
          const devices = (await call(`${server.baseUrl}/executions/${id}`, { headers: ci })).body.devices;
          throw new Error(
            `execution ${id} (${sharding}, ${deviceSet}) not finished after ${limitMs / 1000} s: ${JSON.stringify(devices)}\nagent log:\n${agentProcess.output().slice(-6000)}`,
          );
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const executionMs = performance.now() - started;
      const speeds = theLab.devices().map((d) => d.speed);
      const actual = new Map(durations.map((ms, i) => [String(i), ms * timeScale]));
      const logs = readDeviceLogs(theLab, suite.length);
      const batchCalls = theLab
        .calls()
        .slice(callsBefore)
        .filter((c) => c.argv.join(" ").includes("'testFile'"));
      return {
        deviceSet,
        sharding,
        wallMs: logs.wallMs,
        batchGapMs: median(logs.gapsMs),
        idealMs: idealMs(actual, speeds),
        executionMs,
        batches: batchCalls.length,
        status: view.status,
        summaryTests: view.summary?.tests ?? 0,
      };
    };

    const outcomes: StandInOutcome[] = [];
    const measuredFrom = performance.now();
    for (const deviceSet of ["equal", "slow"] as const) {
      if (deviceSet === "slow") {
        // The last device becomes one of half the speed (the stand-in reads it on every test).
        theLab.plug({ serial: SERIALS.at(-1) as string, model: "Pixel 7", speed: 0.5 });
      }
      for (const sharding of ["duration", "uniform"] as const) {
        // About: uniform, the slowest device's quarter; duration, Σ ÷ Σ speeds and a margin.
        const speeds = theLab.devices().map((d) => d.speed);
        const scaled = suite.reduce((sum, t) => sum + t.ms, 0) * timeScale;
        const expectedMs =
          sharding === "uniform"
            ? scaled / (speeds.length * Math.min(...speeds))
            : (1.25 * scaled) / speeds.reduce((a, b) => a + b, 0);
        const left = options.budgetMs - (performance.now() - measuredFrom);
        if (expectedMs > left) {
          const skipped = `left out: up to ${Math.round(expectedMs / 1000)} s, ${Math.round(left / 1000)} s of the budget left`;
          log(`${deviceSet}, ${sharding}: ${skipped}`);
          outcomes.push({ ...emptyOutcome, deviceSet, sharding, skipped, status: "skipped" });
          continue;
        }
        // Three times the estimate: an execution that takes longer is stuck, and the bench says how.
        const outcome = await execute(sharding, deviceSet, 3 * expectedMs + 30_000);
        clearLogs(theLab);
        log(
          `${deviceSet}, ${sharding}: ${outcome.status}, wall ${(outcome.wallMs / 1000).toFixed(2)} s ÷ ideal ${(outcome.idealMs / 1000).toFixed(2)} s = ${(outcome.wallMs / outcome.idealMs).toFixed(3)}, ${outcome.batches} batches, ${Math.round(outcome.batchGapMs)} ms between batches`,
        );
        outcomes.push(outcome);
      }
    }
    return outcomes;
  } finally {
    await stopAgentProcesses(running);
    lab?.cleanup();
    await server.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

/**
 * From the devices' logs since the last clearLogs: the first `started:` to the last `finished:` of the batch
 * runs on any device (`wallMs`), and the gaps on one device between a batch's last `finished:` and the next
 * batch's first `started:` (`gapsMs`): what a batch costs beyond its tests (reporting, next-batch, adb push,
 * the runner's start). A listing (`-e log true`) logs every test as started and finished at once; its process
 * is told apart by its `run started: N tests` with N the whole suite, which no batch of 4 shards holds.
 */
function readDeviceLogs(lab: DeviceLab, suiteSize: number): { wallMs: number; gapsMs: number[] } {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  const gapsMs: number[] = [];
  for (const serial of SERIALS) {
    const listingPids = new Set<string>();
    // Per batch process on this device: its first started and last finished.
    const batches = new Map<string, { first: number; last: number }>();
    for (const line of lab.logcat(serial)) {
      const parsed = /^(\d\d)-(\d\d) (\d\d):(\d\d):(\d\d)\.(\d{3})\s+(\d+)\s+\d+ \w (\S+)\s*: (.*)$/.exec(
        line,
      );
      if (parsed?.[8] !== "TestRunner") continue;
      const [, mo, d, h, mi, s, ms, pid, , message] = parsed as unknown as string[];
      if (message === `run started: ${suiteSize} tests`) listingPids.add(pid as string);
      if (listingPids.has(pid as string)) continue;
      const at = new Date(
        new Date().getFullYear(),
        Number(mo) - 1,
        Number(d),
        Number(h),
        Number(mi),
        Number(s),
        Number(ms),
      ).getTime();
      const batch = batches.get(pid as string) ?? { first: Number.POSITIVE_INFINITY, last: at };
      batches.set(pid as string, batch);
      if (message?.startsWith("started: ")) {
        first = Math.min(first, at);
        batch.first = Math.min(batch.first, at);
      }
      if (message?.startsWith("finished: ")) {
        last = Math.max(last, at);
        batch.last = Math.max(batch.last, at);
      }
    }
    const ordered = [...batches.values()]
      .filter((b) => Number.isFinite(b.first))
      .sort((a, b) => a.first - b.first);
    for (let i = 1; i < ordered.length; i++) {
      gapsMs.push((ordered[i] as { first: number }).first - (ordered[i - 1] as { last: number }).last);
    }
  }
  return { wallMs: last - first, gapsMs };
}

/**
 * Empties the devices' logs, so that the next execution's wall is read from its own lines only. Between
 * executions nothing reads or writes them (the plans do not capture logcat).
 */
function clearLogs(lab: DeviceLab): void {
  for (const serial of SERIALS) {
    if (lab.logcat(serial).length === 0) continue;
    writeFileSync(path.join(lab.stateDir, "dev", encodeURIComponent(serial), "logcat.log"), "");
  }
}
