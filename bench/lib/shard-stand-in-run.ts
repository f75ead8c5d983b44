// The shards benchmark on the real thing: a Testbay server (in this process, SQLite), one `testbay-agent`
// process and 4 stand-in devices, running a 4-shard instrumentation step of the 200-test suite through the
// sharding protocol. Device time is shortened by FAKE_ADB_TIME_SCALE; each run's tests take their durations
// × a seeded log-normal factor, as in the simulation. Wall time is read from the devices' own logs: from the
// first test started in a batch to the last test finished, on any device.

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
import { idealMs } from "./shard-simulation.ts";

const TEST_PACKAGE = "com.example.basic.test";
const SERIALS = ["emulator-5554", "emulator-5556", "emulator-5558", "emulator-5560"];

export interface StandInRunOptions {
  /** Device ms → real ms. */
  timeScale: number;
  /** Executions of the duration plan before the measured ones, for its history. */
  historyRuns: number;
  sigma: number;
  log: (line: string) => void;
}

export interface StandInOutcome {
  deviceSet: "equal" | "slow";
  sharding: "duration" | "uniform";
  /** First test started to last test finished, on any device (real ms). */
  wallMs: number;
  /** max(Σ durations ÷ Σ speeds, longest ÷ fastest), of this run's durations (real ms). */
  idealMs: number;
  /** The execution, from trigger to finished as the bench saw it (real ms). */
  executionMs: number;
  /** `am instrument -e testFile` runs: the batches run (a batch handed on after a lost device counts twice). */
  batches: number;
  status: string;
  summaryTests: number;
}

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
    lab = await createDeviceLab({
      devices: SERIALS.map((serial) => ({ serial, model: "Pixel 7" })),
      suites: {},
      timeScale,
    });
    const theLab = lab;
    startAgentProcess({
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
    const execute = async (sharding: "duration" | "uniform", deviceSet: "equal" | "slow") => {
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
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const executionMs = performance.now() - started;
      const speeds = theLab.devices().map((d) => d.speed);
      const actual = new Map(durations.map((ms, i) => [String(i), ms * timeScale]));
      const batchCalls = theLab
        .calls()
        .slice(callsBefore)
        .filter((c) => c.argv.join(" ").includes("'testFile'"));
      return {
        deviceSet,
        sharding,
        wallMs: batchWallMs(theLab, suite.length),
        idealMs: idealMs(actual, speeds),
        executionMs,
        batches: batchCalls.length,
        status: view.status,
        summaryTests: view.summary?.tests ?? 0,
      };
    };

    for (let i = 0; i < options.historyRuns; i++) {
      const h = await execute("duration", "equal");
      log(`history run ${i + 1}/${options.historyRuns}: ${h.status}, ${(h.executionMs / 1000).toFixed(1)} s`);
      clearLogs(theLab);
    }
    const outcomes: StandInOutcome[] = [];
    for (const deviceSet of ["equal", "slow"] as const) {
      if (deviceSet === "slow") {
        // The last device becomes one of half the speed (the stand-in reads it on every test).
        theLab.plug({ serial: SERIALS.at(-1) as string, model: "Pixel 7", speed: 0.5 });
      }
      for (const sharding of ["duration", "uniform"] as const) {
        const outcome = await execute(sharding, deviceSet);
        clearLogs(theLab);
        log(
          `${deviceSet}, ${sharding}: ${outcome.status}, wall ${(outcome.wallMs / 1000).toFixed(2)} s ÷ ideal ${(outcome.idealMs / 1000).toFixed(2)} s = ${(outcome.wallMs / outcome.idealMs).toFixed(3)}, ${outcome.batches} batches`,
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
 * runs on any device. A listing (`-e log true`) logs every test as started and finished at once; its process
 * is told apart by its `run started: N tests` with N the whole suite, which no batch of 4 shards holds.
 */
function batchWallMs(lab: DeviceLab, suiteSize: number): number {
  let first = Number.POSITIVE_INFINITY;
  let last = Number.NEGATIVE_INFINITY;
  for (const serial of SERIALS) {
    const listingPids = new Set<string>();
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
      if (message?.startsWith("started: ")) first = Math.min(first, at);
      if (message?.startsWith("finished: ")) last = Math.max(last, at);
    }
  }
  return last - first;
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
