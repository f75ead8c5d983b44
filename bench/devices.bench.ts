// Devices that look after themselves (issue 28, API.md §13), two measures on a real server and real agents:
// (1) the agent's turnaround between two device runs on a managed emulator (its reset by snapshot load and its
// next claim) against the emulator stand-in's own snapshot load and boot wait, done straight from here
// (lib/devices-turnaround.ts); (2) `shards: "auto"` with a 10-minute target on a 200-test suite with history:
// the execution's wall time ÷ the target, on stand-in devices at a time scale (lib/devices-auto-shards.ts).
import { rm } from "node:fs/promises";
import { availableParallelism, loadavg } from "node:os";
import { benchResult } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { type AutoShardsOutcome, measureAutoShards } from "./lib/devices-auto-shards.ts";
import { startDevicesServer } from "./lib/devices-server.ts";
import { AVD, measureTurnaround, type TurnaroundOutcome } from "./lib/devices-turnaround.ts";
import { median } from "./lib/stats.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import { type BenchResult, type Ratio, type Row, type RunOptions, ratio, type Target } from "./lib/types.ts";

export const name = "devices";
export const description =
  "managed emulator turnaround between two device runs ÷ the stand-in's own snapshot load; shards: auto, wall time ÷ a 10-minute target on a 200-test suite with history";

const turnaroundTarget: Target = { op: "<=", value: 1.2 };
const autoShardsTarget: Target = { op: "<=", value: 1.1 };

const plans = {
  // 2 rounds of 10 runs: 18 turnarounds, 18 baseline resets, alternating by round.
  full: { rounds: 2, runsPerRound: 10, timeScale: 0.1, executions: 2 },
  quick: { rounds: 1, runsPerRound: 5, timeScale: 0.05, executions: 1 },
};
/** A real emulator loads a snapshot in ~2 s (its default in the stand-in, device-lab.ts AvdSpec). */
const snapshotLoadMs = 2_000;
/** The clean snapshot's cold boot, shortened: it happens once, before anything is measured. */
const bootMs = 4_000;
const testMs = 200;
const targetMinutes = 10;
const devices = 10;
const historyRuns = 3;
const sigma = 0.2;

const ms = (value: number, label: string, decimals = 0) => ({ label, value, unit: "ms", decimals });

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const plan = quick ? plans.quick : plans.full;
  const startedAt = new Date();
  const loadBefore = loadavg()[0] as number;
  const scope = new CleanupScope();
  try {
    const dir = await makeTempDir("devices");
    scope.defer(() => rm(dir, { recursive: true, force: true }));
    const server = await startDevicesServer(dir, scope, log);

    log(
      `turnaround: ${plan.rounds} round(s) of ${plan.runsPerRound} runs on one managed ${AVD} (snapshot load ${snapshotLoadMs} ms)`,
    );
    const turnaround = await measureTurnaround(
      server,
      { ...plan, snapshotLoadMs, bootMs, testMs, scratch: `${dir}/agents`, log },
      scope,
    );
    log(
      `auto shards: target ${targetMinutes} min, ${devices} stand-in devices at time scale ${plan.timeScale}, ${plan.executions} execution(s)`,
    );
    const auto = await measureAutoShards(
      server,
      {
        targetMinutes,
        devices,
        timeScale: plan.timeScale,
        historyRuns,
        executions: plan.executions,
        sigma,
        scratch: `${dir}/agents`,
        log,
      },
      scope,
    );
    const result = report(quick, startedAt, plan, turnaround, auto);
    // Nothing is pinned: the server, the agent, the stand-ins and this process share the CPUs.
    result.notes.push(
      `Load average (1 min) ${loadBefore.toFixed(1)} at the start, ${(loadavg()[0] as number).toFixed(1)} at the end, on ${availableParallelism()} CPUs; nothing pinned.`,
    );
    return result;
  } finally {
    await scope.close();
  }
}

function report(
  quick: boolean,
  startedAt: Date,
  plan: (typeof plans)["full"],
  turnaround: TurnaroundOutcome,
  auto: AutoShardsOutcome,
): BenchResult {
  const turnarounds = turnaround.turnaroundsMs.flat();
  const baseline = turnaround.baselineMs.flat();
  const perRound = turnaround.turnaroundsMs.map(
    (t, i) => Math.round((median(t) / median(turnaround.baselineMs[i] as number[])) * 1000) / 1000,
  );
  const targetMs = targetMinutes * 60_000;
  const ratios: Ratio[] = [
    ratio(
      "managed emulator: agent turnaround ÷ stand-in snapshot load + boot wait (medians)",
      median(turnarounds) / median(baseline),
      turnaroundTarget,
      perRound,
    ),
    ratio(
      `shards: "auto": execution wall ÷ ${targetMinutes} min target`,
      median(auto.executions.map((e) => e.wallMs)) / targetMs,
      autoShardsTarget,
      auto.executions.map((e) => Math.round((e.wallMs / targetMs) * 1000) / 1000),
    ),
  ];
  const notPassed = turnaround.statuses.filter((s) => s !== "passed").length;
  const rows: Row[] = [
    {
      label: "agent turnaround (finished_at k → started_at k+1)",
      metrics: [
        ms(median(turnarounds), "median"),
        ms(Math.min(...turnarounds), "min"),
        ms(Math.max(...turnarounds), "max"),
        { label: "n", value: turnarounds.length, unit: "", decimals: 0 },
      ],
    },
    {
      label: "setup_ms of the device runs (the agent's reset)",
      metrics: [
        ms(median(turnaround.setupMs), "median"),
        ms(Math.min(...turnaround.setupMs), "min"),
        ms(Math.max(...turnaround.setupMs), "max"),
        { label: "n", value: turnaround.setupMs.length, unit: "", decimals: 0 },
      ],
    },
    {
      label: "baseline: snapshot load + boot wait, straight",
      metrics: [
        ms(median(baseline), "median"),
        ms(Math.min(...baseline), "min"),
        ms(Math.max(...baseline), "max"),
        { label: "n", value: baseline.length, unit: "", decimals: 0 },
      ],
    },
    {
      label: "a device run itself (claim → complete)",
      metrics: [
        ms(median(turnaround.runMs), "median"),
        ms(Math.min(...turnaround.runMs), "min"),
        ms(Math.max(...turnaround.runMs), "max"),
        { label: "n", value: turnaround.runMs.length, unit: "", decimals: 0 },
      ],
    },
  ];
  const autoRows: Row[] = auto.executions.map((e, i) => ({
    label: `execution ${i + 1}`,
    metrics: [
      { label: "wall", value: e.wallMs / 60_000, unit: "min", decimals: 2 },
      { label: "claim → end", value: e.runningMs / 60_000, unit: "min", decimals: 2 },
      { label: "even split", value: e.evenSplitMs / 60_000, unit: "min", decimals: 2 },
      { label: "wall ÷ target", value: e.wallMs / targetMs, unit: "", decimals: 3 },
      { label: "shards", value: e.shards, unit: "", decimals: 0 },
      { label: "tests", value: e.tests, unit: "", decimals: 0 },
    ],
    detail: `${e.status}: ${e.reason}`,
  }));
  const overheadMs = median(turnarounds) - median(baseline);
  return benchResult(quick, startedAt, {
    name,
    description,
    environment: {
      node: process.version,
      rounds: plan.rounds,
      runs_per_round: plan.runsPerRound,
      snapshot_load_ms: snapshotLoadMs,
      auto_time_scale: plan.timeScale,
      auto_devices: devices,
      auto_history_runs: historyRuns,
    },
    rows,
    sections: [
      {
        title: `shards: "auto", target ${targetMinutes} min, ${devices} stand-in devices, device time × ${plan.timeScale}`,
        rows: autoRows,
        detailLabel: "status: shards_planned.reason",
      },
    ],
    ratios,
    notes: [
      `Turnaround: a real server (one process, SQLite, bench/servers/webhooks-instance.ts) and a real \`testbay-agent --devices auto --emulator ${AVD}\` on the emulator stand-in at time scale 1 (snapshot load ${snapshotLoadMs} ms, as a real emulator's takes about 2 s). One writable instance, so the agent resets it by \`emu avd snapshot load testbay-clean\` and a boot wait. ${plan.rounds} round(s) of ${plan.runsPerRound} runs, all queued before the first starts; per pair of consecutive runs, the server's finished_at of one (the agent's complete) to started_at of the next (the claim that took it), both on the server's clock: the reset and the next claim, no wait for work. ${notPassed} of ${turnaround.statuses.length} runs not passed.`,
      `Baseline, alternating with the runs by round, on the same instance while the agent is idle: \`adb -s ${turnaround.serial} emu avd snapshot load testbay-clean\`, \`wait-for-device\`, then \`getprop sys.boot_completed\` until 1 (every 100 ms), from this process; what the agent's reset runs, without the agent. Median turnaround − median baseline: ${Math.round(overheadMs)} ms (the agent's complete → reset → claim sequence around the same adb calls).`,
      `setup_ms is the agent's own measure of the reset, reported on the next run; the turnaround adds the claim to it. The agent sent ${turnaround.agentSnapshotLoads} snapshot loads for ${turnaround.statuses.length} runs, and the emulator was launched ${turnaround.launches} times (the clean snapshot's boot and the instance's: ${turnaround.launches > 2 ? "MORE: a reset restarted it" : "no reset restarted it"}).`,
      `Auto shards: the 200 tests of bench/data/junit-timings.json (Σ ${(auto.suiteMs / 60_000).toFixed(1)} min as reported), ${historyRuns} executions of history seeded through the agent API as an agent records them (claim, test_case events, complete, as bench/lib/shard-history.ts; each test × a seeded log-normal factor, σ ${sigma}), Σ p80 ${(auto.historyP80Ms / 60_000).toFixed(1)} min; the plan's step has shards "auto", target_minutes ${targetMinutes}, max_shards ${devices}, duration sharding; one agent with ${devices} stand-in devices online. Each measured execution's tests take new jittered durations. The devices online the reason counts may include, besides these ${devices}, the turnaround agent's emulator and the history's seeding device: an agent stays online for 75 s after it was last seen, stopped or not (packages/server/src/features/agent/agents.repo.ts onlineWindowMs); with max_shards ${devices} that cannot raise the count past the devices that run it.`,
      `Ten real minutes per execution is too long for a benchmark: the stand-ins run at time scale ${plan.timeScale} and wall time is read back in device time (real ÷ ${plan.timeScale}), trigger (this process's clock) to the execution's finished_at. Process costs on the stand-ins (installs, \`am instrument\` starts) are ÷ ${plan.timeScale} in device time, seconds each, as on real devices; on 2 CPUs ${devices} devices' processes also compete, which the wall includes.`,
      ...(quick
        ? ["--quick: one round of 5 runs and one execution at time scale 0.05; do not quote it."]
        : []),
    ],
  });
}
