// The rate limit under saturation: the admitted rate ÷ the configured 4/s, for the in-memory limiter on one API
// instance and for the Redis limiter shared by two, and what the limiter adds to a request's latency.
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import path from "node:path";
import { Redis } from "ioredis";
import { benchResult } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { formatNumber } from "./lib/format.ts";
import { assertAllOk, type LoadRun, runLoad } from "./lib/load.ts";
import { benchDir } from "./lib/paths.ts";
import { type Endpoint, type Saturation, saturate, sequentialLatencies } from "./lib/ratelimit-load.ts";
import type { RateLimitServerReady } from "./lib/ratelimit-server.ts";
import { type ReadyMessage, type ServerProcess, startServerProcess } from "./lib/server-process.ts";
import { median, percentile } from "./lib/stats.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import { type BenchResult, type Metric, type Ratio, type Row, type RunOptions, ratio } from "./lib/types.ts";

export const name = "ratelimit";
export const description =
  "admitted rate under saturation ÷ the configured 4/s (memory on 1 instance, Redis shared by 2), and the limiter's added latency";

const burst = 20;
const perSecond = 4;
/** Within ±5 % of the configured rate. */
const tolerance = 0.05;
const redisUrl = process.env.BENCH_REDIS_URL ?? "redis://127.0.0.1:6379";

const plans = {
  full: {
    warmupMs: 2000,
    windowMs: 10_000,
    concurrency: 8,
    maxRequests: 300_000,
    latencyRounds: 3,
    latencyCount: 2000,
    loadSeconds: 3,
  },
  quick: {
    warmupMs: 1000,
    windowMs: 3000,
    concurrency: 8,
    maxRequests: 100_000,
    latencyRounds: 2,
    latencyCount: 300,
    loadSeconds: 1,
  },
};

type Server = ServerProcess<RateLimitServerReady & ReadyMessage>;

interface RateResult {
  label: string;
  saturation: Saturation;
  /** Admitted requests sent within the measured window (after the warm-up that spends the burst). */
  admittedInWindow: number;
  /** Admitted requests during the warm-up: the burst plus the rate. */
  admittedInWarmup: number;
  /** (admitted − 1) ÷ the time from the first to the last admitted request of the window. */
  ratePerSecond: number;
  /** admitted ÷ window length: coarser (±1 token), a cross-check. */
  countRatePerSecond: number;
  /** Admitted requests per instance, in the window. */
  perInstance: number[];
}

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const plan = quick ? plans.quick : plans.full;
  const startedAt = new Date();
  const scope = new CleanupScope();
  try {
    const dir = await makeTempDir(name);
    scope.defer(() => rm(dir, { recursive: true, force: true }));
    const prefix = `testbay-bench:rl:${process.pid}:${randomBytes(4).toString("hex")}:`;
    await checkRedis();
    scope.defer(() => deleteKeys(prefix));

    const start = (label: string, env: Record<string, string>) =>
      startServerProcess<RateLimitServerReady & ReadyMessage>(
        {
          label,
          entry: path.join(benchDir, "lib", "ratelimit-server.ts"),
          env: { BENCH_RATE_BURST: String(burst), BENCH_RATE_PER_SECOND: String(perSecond), ...env },
          stdoutFile: path.join(dir, `${label}.stdout.log`),
        },
        scope,
      );
    log("starting 3 API instances: 1 with the memory limiter, 2 sharing Redis");
    const memory = await start("memory", { BENCH_LIMITER: "memory" });
    const redisEnv = { BENCH_LIMITER: "redis", BENCH_REDIS_URL: redisUrl, BENCH_REDIS_PREFIX: prefix };
    const redisA = await start("redis-a", redisEnv);
    const redisB = await start("redis-b", redisEnv);

    // (a), (b): one client hammering; the burst is spent in the warm-up, the window measures the sustained rate.
    const run = `${process.pid}-${Date.now()}`;
    const limited = (server: Server, client: string): Endpoint => ({
      url: `http://127.0.0.1:${server.ready.port}/limited`,
      headers: { "x-bench-client": client },
    });
    log(`saturating the memory limiter for ${(plan.warmupMs + plan.windowMs) / 1000} s`);
    const memoryRate = await measureRate(
      "memory limiter, 1 instance",
      [limited(memory, `sat-mem-${run}`)],
      plan,
    );
    log(`saturating the Redis limiter through 2 instances for ${(plan.warmupMs + plan.windowMs) / 1000} s`);
    const redisRate = await measureRate(
      "Redis limiter, 2 instances",
      [limited(redisA, `sat-redis-${run}`), limited(redisB, `sat-redis-${run}`)],
      plan,
    );

    // (c) latency: admitted requests (the agent policy never refuses) against the same process's bare route.
    const endpoint = (server: Server, route: "bare" | "limited"): Endpoint => ({
      url: `http://127.0.0.1:${server.ready.port}/${route}`,
      headers: { "x-bench-client": `lat-${server.ready.limiter}-${run}`, "x-bench-role": "agent" },
    });
    const subjects = [
      {
        label: "memory instance, GET /bare (not limited)",
        endpoint: endpoint(memory, "bare"),
        pid: memory.pid,
      },
      { label: "memory instance, GET /limited", endpoint: endpoint(memory, "limited"), pid: memory.pid },
      {
        label: "Redis instance, GET /bare (not limited)",
        endpoint: endpoint(redisA, "bare"),
        pid: redisA.pid,
      },
      { label: "Redis instance, GET /limited", endpoint: endpoint(redisA, "limited"), pid: redisA.pid },
    ];
    const latencies = subjects.map(() => [] as number[]);
    const p50ByRound = subjects.map(() => [] as number[]);
    for (const subject of subjects) await sequentialLatencies(subject.endpoint, 200); // warm-up
    for (let round = 0; round < plan.latencyRounds; round++) {
      const order = subjects.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      log(
        `latency round ${round + 1}/${plan.latencyRounds}: ${plan.latencyCount} requests one at a time each`,
      );
      for (const i of order) {
        const times = await sequentialLatencies(
          (subjects[i] as (typeof subjects)[number]).endpoint,
          plan.latencyCount,
        );
        latencies[i]?.push(...times);
        p50ByRound[i]?.push(percentile(Float64Array.from(times).sort(), 50));
      }
    }
    const latencyStats = latencies.map((times) => {
      const sorted = Float64Array.from(times).sort();
      return {
        p50: percentile(sorted, 50) * 1000,
        p99: percentile(sorted, 99) * 1000,
        mean: (times.reduce((s, t) => s + t, 0) / times.length) * 1000,
      };
    });

    // (d) the same four under concurrent load (autocannon, 16 connections): throughput and latency.
    const loads: LoadRun[] = [];
    for (const subject of subjects) {
      log(`concurrent load: ${subject.label}, ${plan.loadSeconds} s after a 0.5 s warm-up`);
      const common = {
        url: subject.endpoint.url,
        headers: subject.endpoint.headers,
        connections: 16,
        pipelining: 1,
      };
      await runLoad({ ...common, durationSeconds: 0.5 });
      const load = await runLoad({
        ...common,
        durationSeconds: plan.loadSeconds,
        serverPid: subject.pid,
      });
      assertAllOk(subject.label, load);
      loads.push(load);
    }

    const rateRows: Row[] = [memoryRate, redisRate].map((r) => ({
      label: r.label,
      metrics: [
        { label: "sent", value: r.saturation.sent, unit: "" },
        { label: "offered req/s", value: r.saturation.sent / (r.saturation.durationMs / 1000), unit: "" },
        { label: "admitted in warm-up", value: r.admittedInWarmup, unit: "" },
        { label: "admitted in window", value: r.admittedInWindow, unit: "" },
        { label: "admitted/s", value: r.ratePerSecond, unit: "", decimals: 3 },
        { label: "count ÷ window /s", value: r.countRatePerSecond, unit: "", decimals: 2 },
        { label: "ratio to 4/s", value: r.ratePerSecond / perSecond, unit: "", decimals: 3 },
      ] satisfies Metric[],
      detail: r.perInstance.length > 1 ? r.perInstance.join(" + ") : String(r.perInstance[0] ?? 0),
    }));

    const at = (i: number) => latencyStats[i] as (typeof latencyStats)[number];
    const latencyRows: Row[] = subjects.map((subject, i) => ({
      label: subject.label,
      metrics: [
        { label: "p50", value: at(i).p50, unit: "µs" },
        { label: "p99", value: at(i).p99, unit: "µs" },
        { label: "mean", value: at(i).mean, unit: "µs" },
      ],
      detail: (p50ByRound[i] ?? []).map((v) => (v * 1000).toFixed(0)).join(" "),
    }));
    const loadRows: Row[] = subjects.map((subject, i) => {
      const load = loads[i] as (typeof loads)[number];
      return {
        label: subject.label,
        metrics: [
          { label: "req/s", value: load.requestsPerSecond, unit: "" },
          { label: "p50", value: load.p50Ms, unit: "ms", decimals: 2 },
          { label: "p99", value: load.p99Ms, unit: "ms", decimals: 2 },
          { label: "server CPU", value: load.serverCpuPercent ?? Number.NaN, unit: "%" },
        ],
      };
    });
    const addedMemory = at(1).p50 - at(0).p50;
    const addedRedis = at(3).p50 - at(2).p50;
    const perRound = (i: number, j: number) =>
      (p50ByRound[i] ?? []).map((v, round) => (v - (p50ByRound[j]?.[round] ?? Number.NaN)) * 1000);

    const ratios: Ratio[] = [];
    for (const r of [memoryRate, redisRate]) {
      const value = r.ratePerSecond / perSecond;
      ratios.push(ratio(`${r.label}: admitted ÷ 4/s`, value));
      ratios.push(
        ratio(`${r.label}: |admitted ÷ 4/s − 1|`, Math.abs(value - 1), { op: "<=", value: tolerance }),
      );
    }
    const loadOf = (i: number) => (loads[i] as (typeof loads)[number]).requestsPerSecond;
    ratios.push(ratio("memory: limited ÷ bare req/s (16 connections)", loadOf(1) / loadOf(0)));
    ratios.push(ratio("Redis: limited ÷ bare req/s (16 connections)", loadOf(3) / loadOf(2)));

    const notes = [
      `servers: 3 child processes (node --import tsx bench/lib/ratelimit-server.ts) on 127.0.0.1, each a Fastify app with Testbay's own rate-limit hook, error handling and limiter, policy burst ${burst}, ${perSecond}/s; the 2 Redis instances have a connection each to ${redisUrl} (keys under a prefix of this run's, deleted at the end). Authentication and the database are left out: they do not bear on the limit`,
      `saturation: one client, ${plan.concurrency} requests in flight, for ${plan.warmupMs / 1000} s of warm-up (spends the burst of ${burst}) then a ${plan.windowMs / 1000} s window, at most ${plan.maxRequests.toLocaleString("en-US")} requests; with 2 instances, request n goes to instance n mod 2. admitted/s = (admitted − 1) ÷ time from the first to the last admitted request sent in the window; count ÷ window is coarser (±1 token = ±${((1 / ((perSecond * plan.windowMs) / 1000)) * 100).toFixed(1)} %). Detail column: admitted per instance in the window`,
      `latency: admitted requests (agent policy, never refuses), one at a time over one keep-alive connection, ${plan.latencyRounds} rounds × ${plan.latencyCount} per route, alternating order; /bare is the same process's unlimited route. Detail column: p50 µs by round`,
      `added p50 latency per request: memory limiter ${formatNumber(addedMemory, 0)} µs (by round ${perRound(
        1,
        0,
      )
        .map((v) => v.toFixed(0))
        .join(" ")}), Redis limiter ${formatNumber(addedRedis, 0)} µs (by round ${perRound(3, 2)
        .map((v) => v.toFixed(0))
        .join(" ")}): the Redis one is a loopback round trip to Redis and the script`,
      "concurrent load: autocannon, 16 connections, pipelining 1, once per route after a 0.5 s warm-up; not pinned to CPUs, so other processes on the machine show in these numbers",
    ];
    for (const r of [memoryRate, redisRate]) {
      if (r.saturation.capped)
        notes.push(`WARNING: ${r.label}: stopped at the request cap before the time was up`);
    }

    return benchResult(quick, startedAt, {
      name,
      description,
      environment: { node: process.version, redis: redisUrl },
      rows: rateRows,
      detailLabel: "admitted by instance",
      sections: [
        { title: "latency, one request at a time", rows: latencyRows, detailLabel: "p50 µs by round" },
        { title: "throughput, 16 connections", rows: loadRows },
      ],
      ratios,
      notes,
      details: {
        rates: [memoryRate, redisRate].map((r) => ({
          ...r,
          saturation: { ...r.saturation, admittedBy: undefined },
        })),
        latencyStats,
        p50ByRoundMs: p50ByRound,
        loads,
        addedP50Us: { memory: addedMemory, redis: addedRedis, medianMemoryByRound: median(perRound(1, 0)) },
      },
    });
  } finally {
    await scope.close();
  }
}

async function measureRate(
  label: string,
  endpoints: Endpoint[],
  plan: (typeof plans)["full"],
): Promise<RateResult> {
  const saturation = await saturate({
    endpoints,
    concurrency: plan.concurrency,
    durationMs: plan.warmupMs + plan.windowMs,
    maxRequests: plan.maxRequests,
  });
  const unexpected = Object.keys(saturation.statusCodes).filter((code) => code !== "200" && code !== "429");
  if (unexpected.length > 0) {
    throw new Error(`${label}: answers other than 200 and 429: ${JSON.stringify(saturation.statusCodes)}`);
  }
  const windowStart = saturation.startedAt + plan.warmupMs;
  const windowEnd = saturation.startedAt + saturation.durationMs;
  const inWindow = saturation.admittedAt.map((at, i) => ({ at, by: saturation.admittedBy[i] as number }));
  const window = inWindow.filter((a) => a.at >= windowStart);
  const first = window[0]?.at ?? Number.NaN;
  const last = window[window.length - 1]?.at ?? Number.NaN;
  const perInstance = endpoints.map((_, i) => window.filter((a) => a.by === i).length);
  return {
    label,
    saturation,
    admittedInWindow: window.length,
    admittedInWarmup: saturation.admittedAt.length - window.length,
    ratePerSecond: (window.length - 1) / ((last - first) / 1000),
    countRatePerSecond: window.length / ((windowEnd - windowStart) / 1000),
    perInstance,
  };
}

async function checkRedis(): Promise<void> {
  const redis = new Redis(redisUrl, {
    lazyConnect: true,
    disableClientInfo: true,
    retryStrategy: () => null,
    connectTimeout: 2000,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(
      `Redis does not answer at ${redisUrl} (set BENCH_REDIS_URL, or start it: redis-server --daemonize yes): ${String(error)}`,
    );
  } finally {
    redis.disconnect();
  }
}

async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(redisUrl, { disableClientInfo: true });
  try {
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}
