// The devices benchmark's first half (API.md §13 "Every device run starts on a clean device"): a real
// `testbay-agent --emulator AVD=1` on the emulator stand-in runs device runs one after the other on its one
// managed instance, which is writable, so the agent resets it between runs by `emu avd snapshot load
// testbay-clean` and a wait for sys.boot_completed (packages/agent/src/managed/managed-emulators.ts
// resetInstance). The baseline is the same reset done by this process straight against the stand-in.
//
// Turnaround, per pair of consecutive runs: the server's finished_at of run k (the agent's complete call) to
// started_at of run k+1 (the claim that took it), both on the server's clock. Every run of a round is queued
// before the first starts, so no gap is spent waiting for work: what is left is the agent's reset and its next
// claim. Rounds alternate: the baseline resets (the agent idle, nothing queued), then the round's runs.

import { execFile } from "node:child_process";
import { performance } from "node:perf_hooks";
import { setTimeout as delay } from "node:timers/promises";
import { promisify } from "node:util";
import { createDeviceLab } from "../../packages/agent/test/stand-ins/device-lab.ts";
import { call } from "../../packages/server/test/harness.ts";
import type { CleanupScope } from "./cleanup.ts";
import {
  APP_VERSION,
  agentDevices,
  type DevicesServer,
  startBenchAgent,
  waitUntil,
} from "./devices-server.ts";

const run = promisify(execFile);

export const AVD = "Pixel_7_API_34";
const TEST_PACKAGE = "com.example.basic.test";
const CLEAN_SNAPSHOT = "testbay-clean";
const AGENT = "bench-emulator";

export interface TurnaroundOptions {
  rounds: number;
  runsPerRound: number;
  /** The stand-in's `emu avd snapshot load` (and boot from a snapshot), device ms; the lab runs at time scale 1. */
  snapshotLoadMs: number;
  /** The stand-in's cold boot (the clean snapshot's making), device ms. */
  bootMs: number;
  /** The one test of the step, device ms. */
  testMs: number;
  scratch: string;
  log: (line: string) => void;
}

export interface TurnaroundOutcome {
  serial: string;
  /** Per round: finished_at(k) → started_at(k+1), ms. */
  turnaroundsMs: number[][];
  /** Per round: snapshot load + wait-for-device + boot_completed, straight against the stand-in, ms. */
  baselineMs: number[][];
  /** setup_ms of every run that had one (all but the first). */
  setupMs: number[];
  /** Claim (started_at) to complete (finished_at) of each run, ms: the run itself, for scale. */
  runMs: number[];
  statuses: string[];
  /** `emu avd snapshot load` calls the agent made (the lab's calls less the baseline's). */
  agentSnapshotLoads: number;
  /** Emulator launches: the clean snapshot's and the instance's; more means the agent restarted it. */
  launches: number;
}

interface DeviceRunView {
  status: string;
  serial?: string | null;
  started_at: string | null;
  finished_at: string | null;
  setup_ms?: number | null;
}

export async function measureTurnaround(
  server: DevicesServer,
  options: TurnaroundOptions,
  scope: CleanupScope,
): Promise<TurnaroundOutcome> {
  const { log } = options;
  const lab = await createDeviceLab({
    avds: [{ name: AVD, model: "Pixel 7", bootMs: options.bootMs, snapshotLoadMs: options.snapshotLoadMs }],
    suites: {
      [TEST_PACKAGE]: {
        tests: [
          {
            class: "com.example.basic.LoginTest",
            method: "signsIn",
            outcome: "pass",
            duration_ms: options.testMs,
          },
        ],
      },
    },
    timeScale: 1,
  });
  scope.defer(() => lab.cleanup());
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: server.ci,
    json: {
      name: "devices turnaround",
      package_name: "com.example.basic",
      devices: [{ platform: "android", model: "Pixel 7" }],
      steps: [{ type: "instrumentation", record_video: "never", logcat: false }],
    },
  });
  if (plan.status !== 201) throw new Error(`plan: ${plan.status} ${JSON.stringify(plan.body)}`);

  const agent = startBenchAgent(
    server,
    { name: AGENT, scratch: options.scratch, args: ["--devices", "auto", "--emulator", AVD], env: lab.env },
    scope,
  );
  const agentLog = () => `agent log:\n${agent.output().slice(-4000)}`;
  // The clean snapshot's cold boot, then the instance's boot from it: well within 2 min at time scale 1.
  const [device] = await waitUntil(
    "the managed emulator idle in GET /agents",
    120_000,
    async () => {
      const devices = await agentDevices(server, AGENT);
      return devices.length === 1 && devices[0]?.state === "idle" && devices;
    },
    agentLog,
  );
  const serial = (device as { serial: string }).serial;
  log(`${serial} booted and offered`);

  const adbEnv = { ...process.env, ...lab.env };
  const adb = async (...args: string[]) =>
    (await run("adb", ["-s", serial, ...args], { env: adbEnv, timeout: 60_000 })).stdout;
  /** What the agent's reset does (resetInstance and wait-for-boot.ts), with nothing around it. */
  const baselineReset = async () => {
    const started = performance.now();
    const reply = await adb("emu", "avd", "snapshot", "load", CLEAN_SNAPSHOT);
    if (!/^OK/m.test(reply) || /KO/.test(reply)) throw new Error(`snapshot load: ${reply}`);
    await adb("wait-for-device");
    for (let i = 0; ; i++) {
      if ((await adb("shell", "getprop", "sys.boot_completed")).trim() === "1") break;
      if (i >= 600) throw new Error(`${serial}: sys.boot_completed not 1 after a snapshot load`);
      await delay(100);
    }
    return performance.now() - started;
  };

  const outcome: TurnaroundOutcome = {
    serial,
    turnaroundsMs: [],
    baselineMs: [],
    setupMs: [],
    runMs: [],
    statuses: [],
    agentSnapshotLoads: 0,
    launches: 0,
  };
  let resets = 0;
  const resetsLogged = () => agent.output().match(/device emulator-\d+ reset in \d+ ms/g)?.length ?? 0;
  for (let round = 0; round < options.rounds; round++) {
    const baseline: number[] = [];
    for (let i = 0; i < options.runsPerRound - 1; i++) baseline.push(await baselineReset());
    outcome.baselineMs.push(baseline);

    const ids: string[] = [];
    for (let i = 0; i < options.runsPerRound; i++) {
      const triggered = await call(`${server.baseUrl}/testplan/run`, {
        headers: server.ci,
        json: { test_plan_id: plan.body.id, package_name: "com.example.basic", version: APP_VERSION },
      });
      if (triggered.status !== 200)
        throw new Error(`run: ${triggered.status} ${JSON.stringify(triggered.body)}`);
      ids.push(triggered.body.execution.id as string);
    }
    // A run takes a few seconds here (installs, one test, the reset): a minute each is a stuck agent.
    const runs = await waitUntil(
      `round ${round + 1}'s ${ids.length} runs to end`,
      60_000 * ids.length,
      async () => {
        const views: DeviceRunView[] = [];
        for (const id of ids) {
          const view = (await call(`${server.baseUrl}/executions/${id}`, { headers: server.ci })).body;
          if (["queued", "running"].includes(view.status)) return false;
          views.push(...(view.devices as DeviceRunView[]));
        }
        return views;
      },
      agentLog,
    );
    // The last run's reset too, so that the next round's baseline has the device to itself.
    resets += ids.length;
    await waitUntil("the last run's reset", 60_000, async () => resetsLogged() >= resets, agentLog);

    const ordered = runs
      .filter((r) => r.started_at && r.finished_at)
      .sort((a, b) => Date.parse(a.started_at as string) - Date.parse(b.started_at as string));
    const turnarounds: number[] = [];
    for (let i = 1; i < ordered.length; i++) {
      const previous = ordered[i - 1] as DeviceRunView;
      const next = ordered[i] as DeviceRunView;
      turnarounds.push(Date.parse(next.started_at as string) - Date.parse(previous.finished_at as string));
    }
    outcome.turnaroundsMs.push(turnarounds);
    for (const r of runs) {
      outcome.statuses.push(r.status);
      if (typeof r.setup_ms === "number") outcome.setupMs.push(r.setup_ms);
      if (r.started_at && r.finished_at) {
        outcome.runMs.push(Date.parse(r.finished_at) - Date.parse(r.started_at));
      }
    }
    log(
      `round ${round + 1}: turnaround ${turnarounds.map((ms) => Math.round(ms)).join(", ")} ms; baseline ${baseline.map((ms) => Math.round(ms)).join(", ")} ms`,
    );
  }
  const baselineLoads = outcome.baselineMs.flat().length;
  outcome.agentSnapshotLoads =
    lab
      .calls()
      .filter((c) => c.tool === "adb" && c.argv.join(" ").includes(`snapshot load ${CLEAN_SNAPSHOT}`))
      .length - baselineLoads;
  outcome.launches = lab.emulatorLaunches().filter((e) => e.exit === undefined).length;
  await agent.stop();
  if (lab.emulators().length > 0) {
    throw new Error(`SIGTERM left ${lab.emulators().length} emulator(s) running\n${agentLog()}`);
  }
  return outcome;
}
