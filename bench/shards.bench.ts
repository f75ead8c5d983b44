// How evenly a sharded step's devices finish: a 200-test suite with the durations of public JUnit reports,
// split over 4 devices by `duration` sharding with history (a shared queue of batches) and by `uniform`
// sharding (exact lists by count), in the same run, as wall time ÷ the ideal. This is a simulation of the
// plan (bench/lib/shard-simulation.ts): the same measure on real agents and stand-in devices is added to
// this benchmark with the sharding protocol that runs the plans.
import { readFile } from "node:fs/promises";
import path from "node:path";
import {
  durationBatches,
  type ListedTest,
  p80,
  testKey,
  uniformShards,
} from "../packages/server/src/features/device-runs/shard-plan.ts";
import { benchResult } from "./lib/bench-result.ts";
import { benchDir } from "./lib/paths.ts";
import { logNormalFactor, seededRandom } from "./lib/seeded-random.ts";
import { idealMs, type ShardPlanModel, simulate } from "./lib/shard-simulation.ts";
import { runOnStandIns, type StandInOutcome } from "./lib/shard-stand-in-run.ts";
import { median } from "./lib/stats.ts";
import { type BenchResult, type Ratio, type Row, type RunOptions, ratio, type Target } from "./lib/types.ts";

export const name = "shards";
export const description =
  "wall time ÷ ideal of a 200-test suite (public JUnit timings) on 4 devices, duration sharding with history against uniform: simulated, and run on a real server and agent with 4 stand-in devices";

const target: Target = { op: "<=", value: 1.15 };
// The stand-in run's time scale: at 0.1 a stand-in's overhead per batch (several ~100 ms processes and calls) is a
// few seconds of device time, a real device's runner start (shard-stand-in-run.ts). Its budget bounds the
// measured executions (~100 s each at 0.1, uniform with a slow device ~200 s).
const plans = {
  full: { rounds: 25, timeScale: 0.1, standInHistory: 3, standInBudgetMs: 630_000 },
  quick: { rounds: 5, timeScale: 0.02, standInHistory: 3, standInBudgetMs: 150_000 },
};
const shards = 4;
/** An `am instrument` start on a real device takes ~1–3 s: the middle, and both ends in a section. */
const overheadMs = 2_000;
const overheadRange = [1_000, 3_000];
/**
 * Should the planner learn the runner start from what it observes instead of assuming 2 s? The stand-ins
 * under load take ~8 s of device time per batch (measured in the stand-in section): simulated here, a plan
 * cut for 2 s run on devices that take `actual`, against a plan cut for `actual` (what a planner that
 * measured earlier batches of the plan would cut).
 */
const mismatches = [
  { planned: 2_000, actual: 5_000 },
  { planned: 2_000, actual: 8_000 },
  { planned: 5_000, actual: 5_000 },
  { planned: 8_000, actual: 8_000 },
];
/** Runs of history per test before the measured one, each a jittered copy of the report's duration. */
const historyRuns = 5;
/** Run-to-run variation of a test's duration: log-normal, two thirds of runs within ±20 %. */
const sigma = 0.2;

const deviceSets = [
  { key: "equal", label: "4 equal devices", speeds: [1, 1, 1, 1] },
  { key: "slow", label: "one device 2× slower", speeds: [1, 1, 1, 0.5] },
] as const;

interface TimingsFile {
  tests: Array<{ report: string; classname: string; name: string; seconds: number }>;
}

/** The suite: one test per entry of the data file, made distinct where two entries share a name. */
async function loadSuite(): Promise<Array<{ test: ListedTest; ms: number }>> {
  const file = path.join(benchDir, "data/junit-timings.json");
  const { tests } = JSON.parse(await readFile(file, "utf8")) as TimingsFile;
  // The two reports are runs of the same conformance suite, and each has a few tests of the same name (in
  // different Describe blocks): the report and the occurrence make them distinct tests here.
  const seen = new Map<string, number>();
  return tests.map((entry) => {
    const key = `${entry.report}\u0000${entry.name}`;
    const occurrence = (seen.get(key) ?? 0) + 1;
    seen.set(key, occurrence);
    const name = occurrence === 1 ? entry.name : `${entry.name} (${occurrence})`;
    return { test: { classname: `${entry.classname} (${entry.report})`, name }, ms: entry.seconds * 1000 };
  });
}

type PlanKey = "duration" | "uniform" | "no-history";

/** Other cuts of the same longest-first queue, to show what the chosen one (factor 2, the floor) buys. */
const cuts = [
  { key: "factor-1", label: "first batches ÷ 1 × shards (larger)", options: { factor: 1 } },
  { key: "factor-2", label: "first batches ÷ 2 × shards (chosen)", options: { factor: 2 } },
  { key: "factor-4", label: "first batches ÷ 4 × shards (smaller)", options: { factor: 4 } },
  // No floor and a negligible share: every test a batch of its own (pure longest-first dispatch).
  { key: "single", label: "one test per batch", options: { factor: 1e9, batchOverheadMs: 0 } },
] as const;
const planLabels: Record<PlanKey, string> = {
  duration: "duration, p80 of 5 runs of history",
  uniform: "uniform (lists by count)",
  "no-history": "duration, no history (all 15 s)",
};

interface Outcome {
  ratio: number;
  wallMs: number;
  idealMs: number;
  batches: number;
}

/** One round: a fresh history and measured run (seeded), every plan on every device set. */
function round(suite: Array<{ test: ListedTest; ms: number }>, seed: number, overheads: readonly number[]) {
  const random = seededRandom(seed);
  const tests = suite.map((s) => s.test);
  const history = new Map<string, number>();
  const actual = new Map<string, number>();
  for (const { test, ms } of suite) {
    const past = Array.from({ length: historyRuns }, () => ms * logNormalFactor(random, sigma));
    history.set(testKey(test), p80(past) as number);
    actual.set(testKey(test), ms * logNormalFactor(random, sigma));
  }
  const ids = (list: readonly ListedTest[]) => list.map(testKey);
  const results = new Map<string, Outcome>();
  for (const { planned, actual: overhead } of mismatches) {
    const model: ShardPlanModel = {
      kind: "queue",
      batches: durationBatches(tests, shards, history, { batchOverheadMs: planned }).map((b) => ids(b.tests)),
    };
    for (const devices of deviceSets) {
      const ideal = idealMs(actual, devices.speeds);
      const simulation = simulate(model, actual, devices.speeds, overhead);
      results.set(`mismatch/${planned}/${overhead}/${devices.key}`, {
        ratio: simulation.wallMs / ideal,
        wallMs: simulation.wallMs,
        idealMs: ideal,
        batches: simulation.devices.reduce((sum, d) => sum + d.batches, 0),
      });
    }
  }
  for (const overhead of overheads) {
    const planModels: Record<PlanKey, ShardPlanModel> = {
      duration: {
        kind: "queue",
        batches: durationBatches(tests, shards, history, { batchOverheadMs: overhead }).map((b) =>
          ids(b.tests),
        ),
      },
      uniform: { kind: "lists", lists: uniformShards(tests, shards).map(ids) },
      "no-history": {
        kind: "queue",
        batches: durationBatches(tests, shards, new Map(), { batchOverheadMs: overhead }).map((b) =>
          ids(b.tests),
        ),
      },
    };
    const cutModels: Record<string, ShardPlanModel> = {};
    if (overhead === overheadMs) {
      for (const cut of cuts) {
        const batches = durationBatches(tests, shards, history, {
          batchOverheadMs: overhead,
          ...cut.options,
        });
        cutModels[`cut-${cut.key}`] = { kind: "queue", batches: batches.map((b) => ids(b.tests)) };
      }
    }
    for (const devices of deviceSets) {
      const ideal = idealMs(actual, devices.speeds);
      for (const [plan, model] of Object.entries({ ...planModels, ...cutModels })) {
        const simulation = simulate(model, actual, devices.speeds, overhead);
        results.set(`${overhead}/${devices.key}/${plan}`, {
          ratio: simulation.wallMs / ideal,
          wallMs: simulation.wallMs,
          idealMs: ideal,
          batches: simulation.devices.reduce((sum, d) => sum + d.batches, 0),
        });
      }
    }
  }
  return results;
}

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const { rounds, timeScale, standInHistory, standInBudgetMs } = quick ? plans.quick : plans.full;
  const startedAt = new Date();
  const suite = await loadSuite();
  const seconds = suite.map((s) => s.ms / 1000).sort((a, b) => a - b);
  log(`${suite.length} tests, ${rounds} rounds of simulated history and runs`);

  const overheads = [overheadMs, ...overheadRange];
  const byRound = Array.from({ length: rounds }, (_, i) => round(suite, i + 1, overheads));
  const series = (key: string, pick: (o: Outcome) => number) =>
    byRound.map((r) => pick(r.get(key) as Outcome));

  const rows: Row[] = [];
  const ratios: Ratio[] = [];
  for (const devices of deviceSets) {
    for (const plan of Object.keys(planLabels) as PlanKey[]) {
      const key = `${overheadMs}/${devices.key}/${plan}`;
      const perRound = series(key, (o) => o.ratio);
      rows.push({
        label: `${devices.label}: ${planLabels[plan]}`,
        metrics: [
          { label: "wall", value: median(series(key, (o) => o.wallMs)) / 1000, unit: "s", decimals: 0 },
          { label: "ideal", value: median(series(key, (o) => o.idealMs)) / 1000, unit: "s", decimals: 0 },
          { label: "wall ÷ ideal", value: median(perRound), unit: "", decimals: 3 },
          { label: "worst round", value: Math.max(...perRound), unit: "", decimals: 3 },
          { label: "batches", value: median(series(key, (o) => o.batches)), unit: "", decimals: 0 },
        ],
      });
      if (plan !== "no-history") {
        const round2 = perRound.map((r) => Math.round(r * 1000) / 1000);
        ratios.push(
          ratio(
            `${planLabels[plan]} ÷ ideal, ${devices.label}`,
            median(perRound),
            plan === "duration" ? target : undefined,
            round2,
          ),
        );
      }
    }
  }

  const sensitivity: Row[] = overheads.map((overhead) => ({
    label: `${overhead / 1000} s per runner start`,
    metrics: deviceSets.flatMap((devices) => {
      const key = `${overhead}/${devices.key}/duration`;
      return [
        {
          label: `${devices.key}: wall ÷ ideal`,
          value: median(series(key, (o) => o.ratio)),
          unit: "",
          decimals: 3,
        },
        {
          label: `${devices.key}: batches`,
          value: median(series(key, (o) => o.batches)),
          unit: "",
          decimals: 0,
        },
      ];
    }),
  }));

  const mismatchRows: Row[] = mismatches.map(({ planned, actual }) => ({
    label: `planned for ${planned / 1000} s, devices take ${actual / 1000} s`,
    metrics: deviceSets.flatMap((devices) => {
      const key = `mismatch/${planned}/${actual}/${devices.key}`;
      return [
        {
          label: `${devices.key}: wall ÷ ideal`,
          value: median(series(key, (o) => o.ratio)),
          unit: "",
          decimals: 3,
        },
        {
          label: `${devices.key}: batches`,
          value: median(series(key, (o) => o.batches)),
          unit: "",
          decimals: 0,
        },
      ];
    }),
  }));

  const cutRows: Row[] = cuts.map((cut) => ({
    label: cut.label,
    metrics: deviceSets.flatMap((devices) => {
      const key = `${overheadMs}/${devices.key}/cut-${cut.key}`;
      return [
        {
          label: `${devices.key}: wall ÷ ideal`,
          value: median(series(key, (o) => o.ratio)),
          unit: "",
          decimals: 3,
        },
        {
          label: `${devices.key}: batches`,
          value: median(series(key, (o) => o.batches)),
          unit: "",
          decimals: 0,
        },
      ];
    }),
  }));

  log(
    `on stand-in devices: FAKE_ADB_TIME_SCALE ${timeScale} (1 real s is ${(1 / timeScale).toFixed(0)} s of device time), ${standInHistory} executions of history seeded through the agent API in device ms, measured runs within ${standInBudgetMs / 60_000} min`,
  );
  const standIn = await runOnStandIns(
    suite.map((s) => s.ms / 1000),
    { timeScale, historyRuns: standInHistory, budgetMs: standInBudgetMs, sigma, log },
  );
  const standInLabel = (o: StandInOutcome) =>
    `${deviceSets.find((d) => d.key === o.deviceSet)?.label}: ${o.sharding === "duration" ? planLabels.duration.replace(`${historyRuns} runs`, `${standInHistory} runs`) : planLabels.uniform}`;
  const standInRows: Row[] = standIn.map((o) => ({
    label: standInLabel(o),
    metrics: [
      { label: "wall", value: o.wallMs / 1000, unit: "s", decimals: 2 },
      { label: "ideal", value: o.idealMs / 1000, unit: "s", decimals: 2 },
      { label: "wall ÷ ideal", value: o.skipped ? 0 : o.wallMs / o.idealMs, unit: "", decimals: 3 },
      { label: "batches", value: o.batches, unit: "", decimals: 0 },
      // What a batch cost beyond its tests, in the device time the stand-ins model (— with one per device).
      { label: "per batch, device", value: o.batchGapMs / timeScale / 1000, unit: "s", decimals: 1 },
      { label: "execution", value: o.executionMs / 1000, unit: "s", decimals: 1 },
      { label: "tests", value: o.summaryTests, unit: "", decimals: 0 },
    ],
    detail: o.skipped ?? o.status,
  }));
  for (const o of standIn) {
    if (o.skipped) continue;
    ratios.push(
      ratio(
        `stand-in devices: ${o.sharding} ÷ ideal, ${deviceSets.find((d) => d.key === o.deviceSet)?.label}`,
        o.wallMs / o.idealMs,
        o.sharding === "duration" ? target : undefined,
      ),
    );
  }

  const total = seconds.reduce((sum, s) => sum + s, 0);
  const at = (share: number) => seconds[Math.ceil(share * seconds.length) - 1] as number;
  return benchResult(quick, startedAt, {
    name,
    description,
    environment: {
      node: process.version,
      rounds,
      shards,
      overhead_ms: overheadMs,
      sigma,
      history_runs: historyRuns,
      stand_in_time_scale: timeScale,
      stand_in_history_runs: standInHistory,
    },
    rows,
    sections: [
      {
        title: `on a real server (SQLite) and agent with 4 stand-in devices, device time × ${timeScale}`,
        rows: standInRows,
        detailLabel: "status",
      },
      { title: "duration sharding with history, by the cost of a runner start", rows: sensitivity },
      {
        title: "a runner start slower than the planner assumes (simulated: should it measure it?)",
        rows: mismatchRows,
      },
      {
        title: `other cuts of the same queue (history, ${overheadMs / 1000} s per runner start)`,
        rows: cutRows,
      },
    ],
    ratios,
    notes: [
      `Suite: ${suite.length} tests from two public Kubernetes conformance JUnit reports (bench/data/README.md): Σ ${total.toFixed(0)} s, p50 ${at(0.5).toFixed(1)} s, p80 ${at(0.8).toFixed(1)} s, p95 ${at(0.95).toFixed(1)} s, longest ${seconds.at(-1)?.toFixed(1)} s.`,
      `Each round (seeded 1…${rounds}): ${historyRuns} runs of history and the measured run, each test's reported duration × a log-normal factor (σ ${sigma}); duration sharding expects the p80 of the history, the measured run is what the devices take. Medians over the rounds; "worst round" is the largest ratio.`,
      `Every list or batch costs a runner start of ${overheadMs / 1000} s (an am instrument start on a real device is ~1–3 s; both ends in the section); a device at half speed takes twice as long for its tests and its starts.`,
      "Ideal = max(Σ durations ÷ Σ speeds, longest test ÷ fastest speed), overheads excluded: max(Σ ÷ 4, longest) with equal devices, Σ ÷ 3.5 with one device at half speed (it can take half a device's share off the others).",
      "Uniform runs the listed order in 4 contiguous lists; duration runs one queue the devices take from when free (bench/lib/shard-simulation.ts). Not modeled: claim and upload round trips, a device drained mid-run.",
      "The main table simulates the planner's plans; the first section runs them for real.",
      `Stand-in run: the server in this process (SQLite), one testbay-agent process (--concurrency 4) with 4 stand-in devices of FAKE_ADB_TIME_SCALE ${timeScale}; the same suite under Java names as an instrumentation test package, each execution's durations × a seeded log-normal factor (σ ${sigma}); ${standInHistory} executions of the duration plan's history seeded first through the agent API (claim, test_case events, complete; no device), with durations in device ms, then duration and uniform with 4 equal devices, then again with the last device at speed 0.5. Wall = first test started to last test finished in a batch, on any device (the devices' own logs), so installs, listings and claims are left out as the ideal leaves them; execution s is trigger to finished.`,
      `What the stand-in run models: a device ${Math.round(1 / timeScale)}× as fast as a real one at its tests but not at its processes: between two batches a stand-in device waits for the agent's report, the next-batch call, an adb push and an am instrument start, each a real process or request of some 100 ms, so ÷ ${timeScale} a few seconds of device time, near a real runner start (1–3 s, the planner's 2 s); "per batch, device s" is that gap as measured (median over the devices' batches; it grows with the machine's load). All times are device time (real ÷ ${timeScale}); the seeded history is what a real device records, so the planner's runner start and its durations are on one clock. Measured executions are bounded to ${standInBudgetMs / 60_000} min in all (one that would not fit is left out and says so).`,
    ],
    details: { seconds },
  });
}
