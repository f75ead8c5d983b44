// Requests/s of an authenticated trivial route (GET /v1/me with an x-api-key token: token verification,
// client lookup, rate limiting, the route) against a bare Fastify route, each server alone on one core.
import { createReadStream } from "node:fs";
import { rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { benchResult } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { pinLoadGenerator } from "./lib/cpu.ts";
import { formatCompact, formatNumber } from "./lib/format.ts";
import { assertAllOk, type LoadRun, runLoad } from "./lib/load.ts";
import { openTestbay, unlimited } from "./lib/opening.ts";
import { benchDir } from "./lib/paths.ts";
import { QuietGate } from "./lib/quiet.ts";
import { type ReadyMessage, type ServerProcess, startServerProcess } from "./lib/server-process.ts";
import { median } from "./lib/stats.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import { type BenchResult, type Metric, type RunOptions, ratio, type Target } from "./lib/types.ts";
import type { BareReady } from "./servers/bare.ts";

export const name = "auth";
export const description =
  "requests/s of GET /v1/me (x-api-key token) against a bare Fastify route, each server alone on one core";

const target: Target = { op: ">=", value: 0.5 };
const connections = 50;
const pipelining = 1;

const plans = {
  full: { rounds: 3, firstWarmupSeconds: 2, warmupSeconds: 0.5, measureSeconds: 5, quietBudgetSeconds: 60 },
  quick: {
    rounds: 2,
    firstWarmupSeconds: 0.5,
    warmupSeconds: 0.25,
    measureSeconds: 1,
    quietBudgetSeconds: 5,
  },
};
/** Other processes using more than this (% of one core) make a run wait, within the plan's budget. */
const quietThresholdPercent = 25;

/** What both bench servers report when they are ready. */
type ServerReady = ReadyMessage & { port: number; fastifyVersion: string };

interface Subject {
  label: string;
  url: string;
  headers: Record<string, string>;
  server: ServerProcess<ServerReady>;
  /** Measured runs, in round order. */
  runs: LoadRun[];
  /** Responses the server sent in all (warm-ups, checks and token request included). */
  served: number;
  bodyBytes: number;
}

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const plan = quick ? plans.quick : plans.full;
  const startedAt = new Date();
  const loadAtStart = os.loadavg()[0] ?? 0;
  const scope = new CleanupScope();
  try {
    const dir = await makeTempDir(name);
    scope.defer(() => rm(dir, { recursive: true, force: true }));

    const pinning = pinLoadGenerator();
    const cpu = "serverCpu" in pinning ? pinning.serverCpu : undefined;
    if ("restore" in pinning) scope.defer(pinning.restore);
    const pinned =
      "serverCpu" in pinning
        ? `servers pinned to CPU ${pinning.serverCpu}, load generator (autocannon, in this process) to CPU ${pinning.loadgenCpu}, with taskset`
        : `NOT pinned (${pinning.reason}): servers and load generator share the CPUs`;
    log(pinned);

    const bareServer = await startServerProcess<BareReady & ReadyMessage>(
      {
        label: "bare",
        entry: path.join(benchDir, "servers", "bare.ts"),
        cpu,
        stdoutFile: path.join(dir, "bare.stdout.log"),
      },
      scope,
    );
    const bare = await subject(
      "bare fastify GET /",
      bareServer,
      `http://127.0.0.1:${bareServer.ready.port}/`,
    );

    const startTestbay = async (level: "warn" | "info") => {
      const { server, origin, token } = await openTestbay({
        name: `testbay-${level}`,
        dir,
        scope,
        cpu,
        env: { TESTBAY_LOG_LEVEL: level },
      });
      const measured = await subject(`testbay GET /v1/me, log ${level}`, server, `${origin}/v1/me`, {
        "x-api-key": token,
      });
      measured.served += 1; // the token request
      return measured;
    };
    const warn = await startTestbay("warn");
    const info = await startTestbay("info");
    const subjects = [bare, warn, info];
    const fastifyVersions = new Set(subjects.map((s) => s.server.ready.fastifyVersion));
    if (fastifyVersions.size !== 1) {
      throw new Error(`the servers run different Fastify versions: ${[...fastifyVersions].join(", ")}`);
    }

    const load = async (s: Subject, seconds: number, what: string) => {
      const result = await runLoad({
        url: s.url,
        headers: s.headers,
        connections,
        pipelining,
        durationSeconds: seconds,
        serverPid: s.server.pid,
      });
      s.served += result.completed;
      assertAllOk(`${s.label}, ${what}`, result);
      return result;
    };
    for (const s of subjects) {
      log(`warm-up ${plan.firstWarmupSeconds} s: ${s.label}`);
      await load(s, plan.firstWarmupSeconds, "warm-up");
    }
    const width = Math.max(...subjects.map((s) => s.label.length));
    const quiet = new QuietGate(quietThresholdPercent, plan.quietBudgetSeconds * 1000);
    for (let round = 0; round < plan.rounds; round++) {
      // A B C, C B A, A B C…: drift over the run (heat, other tenants) falls on every subject alike.
      const order = round % 2 === 0 ? subjects : [...subjects].reverse();
      for (const s of order) {
        await quiet.wait();
        await load(s, plan.warmupSeconds, "warm-up");
        const result = await load(s, plan.measureSeconds, `round ${round + 1}`);
        s.runs[round] = result;
        log(
          `round ${round + 1}/${plan.rounds}  ${s.label.padEnd(width)}  ${formatNumber(result.requestsPerSecond).padStart(7)} req/s` +
            `  p50 ${result.p50Ms.toFixed(2)} ms  p99 ${result.p99Ms.toFixed(2)} ms` +
            `  CPU: server ${formatNumber(result.serverCpuPercent)}%, loadgen ${formatNumber(result.loadgenCpuPercent)}%, other ${formatNumber(result.otherCpuPercent)}%`,
        );
      }
    }

    const rps = (s: Subject) => median(s.runs.map((r) => r.requestsPerSecond));
    const perRound = (a: Subject, b: Subject) =>
      a.runs.map((r, i) => r.requestsPerSecond / (b.runs[i]?.requestsPerSecond ?? Number.NaN));
    const cpuUs = (s: Subject) =>
      median(s.runs.map(cpuPerRequest).filter((v): v is number => v !== undefined));
    const cpuPerRound = (a: Subject, b: Subject) =>
      a.runs.map((r, i) => {
        const other = b.runs[i];
        return (cpuPerRequest(r) ?? Number.NaN) / (other ? (cpuPerRequest(other) ?? Number.NaN) : Number.NaN);
      });
    const ratios = [
      ratio("testbay (log warn) ÷ bare, req/s", rps(warn) / rps(bare), target, perRound(warn, bare)),
      ratio("testbay (log info) ÷ bare, req/s", rps(info) / rps(bare), target, perRound(info, bare)),
      ratio(
        "log info ÷ log warn (cost of request logs)",
        rps(info) / rps(warn),
        undefined,
        perRound(info, warn),
      ),
      ratio(
        "server CPU per request, bare ÷ testbay (log warn)",
        cpuUs(bare) / cpuUs(warn),
        undefined,
        cpuPerRound(bare, warn),
      ),
      ratio(
        "server CPU per request, bare ÷ testbay (log info)",
        cpuUs(bare) / cpuUs(info),
        undefined,
        cpuPerRound(bare, info),
      ),
    ];

    const infoLog = await fileStats(logFile(dir, "info"));
    const warnLog = await fileStats(logFile(dir, "warn"));
    const notes = [
      `load: autocannon, ${connections} connections, pipelining ${pipelining}; ${plan.firstWarmupSeconds} s warm-up per server, then ${plan.rounds} rounds of ${plan.measureSeconds} s per server (each after a ${plan.warmupSeconds} s warm-up), order alternating A B C / C B A; every number is the median of the rounds`,
      `servers: one child process each, started the same way (node --import tsx bench/servers/<name>.ts) on 127.0.0.1; Fastify ${[...fastifyVersions][0]} in both; the bare route has no hooks and logger off`,
      pinned,
      `testbay: buildApp from TESTBAY_* variables, embedded SQLite in a temp data dir, one ci client, token from POST /v1/oauth/token; the subject logs at TESTBAY_LOG_LEVEL=warn (no line per request${warnLog.lines > 0 ? `, yet it wrote ${warnLog.lines} lines` : ""})`,
      `log info row: the production default, request logs written to a file: ${(infoLog.lines / info.served).toFixed(1)} lines, ${formatNumber(infoLog.bytes / info.served)} bytes per request`,
      `rate limit raised so it never refuses: TESTBAY_RATE_LIMIT_BURST=${unlimited} TESTBAY_RATE_LIMIT_PER_SECOND=${unlimited}; the limiter still runs on every request (its RateLimit header was checked)`,
      `response bodies: bare ${bare.bodyBytes} B, /v1/me ${warn.bodyBytes} B; latency = time to the whole response, per request, at the load generator`,
      `before each run the harness waited for other processes to use under ${quietThresholdPercent}% of a core: ${quiet.waitedSeconds.toFixed(1)} s waited${quiet.gaveUp > 0 ? `; ${quiet.gaveUp} run${quiet.gaveUp === 1 ? "" : "s"} started busy once the ${plan.quietBudgetSeconds} s budget was spent` : ""}`,
      "CPU columns: % of one core during the measured runs; server = the server process, loadgen = this process (autocannon), other = every other process on the machine (noise from outside the benchmark)",
      ...saturationWarnings(subjects),
      ...noiseWarnings(subjects),
    ];

    return benchResult(quick, startedAt, {
      name,
      description,
      environment: {
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
        // os.cpus(), not availableParallelism(): this process is pinned to one CPU by now.
        cpu: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "unknown"}`,
        fastify: [...fastifyVersions].join(", "),
        loadAverageAtStart: Math.round(loadAtStart * 100) / 100,
      },
      detailLabel: "req/s by round",
      rows: subjects.map((s) => ({
        label: s.label,
        metrics: metrics(s.runs),
        detail: s.runs.map((r) => formatCompact(r.requestsPerSecond)).join(" "),
      })),
      ratios,
      notes,
      details: {
        plan: { ...plan, connections, pipelining, quietThresholdPercent },
        quiet: { waitedSeconds: quiet.waitedSeconds, runsStartedBusy: quiet.gaveUp },
        rateLimit: { burst: unlimited, perSecond: unlimited },
        logs: { info: infoLog, warn: warnLog },
        runs: Object.fromEntries(subjects.map((s) => [s.label, s.runs])),
      },
    });
  } finally {
    await scope.close();
  }
}

function logFile(dir: string, level: string): string {
  return path.join(dir, `testbay-${level}.stdout.log`);
}

/** Checks the route answers 200 before anything is measured, and notes its body size. */
async function subject(
  label: string,
  server: ServerProcess<ServerReady>,
  url: string,
  headers: Record<string, string> = {},
): Promise<Subject> {
  const response = await fetch(url, { headers });
  const body = await response.text();
  if (response.status !== 200) {
    throw new Error(`${label}: GET ${url} answered ${response.status}: ${body.slice(0, 500)}`);
  }
  if (headers["x-api-key"] && !response.headers.get("ratelimit")) {
    throw new Error(`${label}: no RateLimit header, so the limiter did not run`);
  }
  return { label, url, headers, server, runs: [], served: 1, bodyBytes: Buffer.byteLength(body) };
}

function metrics(runs: LoadRun[]): Metric[] {
  const of = (pick: (r: LoadRun) => number | undefined) =>
    median(runs.map(pick).filter((v): v is number => v !== undefined));
  return [
    { label: "req/s", value: of((r) => r.requestsPerSecond), unit: "" },
    { label: "p50", value: of((r) => r.p50Ms), unit: "ms", decimals: 2 },
    { label: "p99", value: of((r) => r.p99Ms), unit: "ms", decimals: 2 },
    { label: "server CPU", value: of((r) => r.serverCpuPercent), unit: "%" },
    { label: "loadgen CPU", value: of((r) => r.loadgenCpuPercent), unit: "%" },
    { label: "other CPU", value: of((r) => r.otherCpuPercent), unit: "%" },
    { label: "server CPU µs/req", value: of(cpuPerRequest), unit: "", decimals: 1 },
  ];
}

/**
 * Microseconds of the server's CPU (all its threads, the log writes included) per request: steadier than
 * req/s when other processes share the machine, since they slow a run down but add little to this.
 */
function cpuPerRequest(run: LoadRun): number | undefined {
  if (run.serverCpuPercent === undefined || run.requestsPerSecond <= 0) return undefined;
  return (run.serverCpuPercent / 100 / run.requestsPerSecond) * 1e6;
}

/** A server that did not keep its core busy was not the bottleneck: then its req/s is not what it seems. */
function saturationWarnings(subjects: Subject[]): string[] {
  const warnings: string[] = [];
  for (const s of subjects) {
    const loadgen = median(s.runs.map((r) => r.loadgenCpuPercent));
    if (loadgen >= 85) {
      warnings.push(
        `WARNING: the load generator used ${loadgen.toFixed(0)}% of its core against ${s.label}: near its limit, so that req/s may be understated`,
      );
    }
    const cpu = median(s.runs.flatMap((r) => (r.serverCpuPercent === undefined ? [] : [r.serverCpuPercent])));
    if (cpu < 85) {
      warnings.push(
        `WARNING: ${s.label} used only ${cpu.toFixed(0)}% of its core: the server was not the bottleneck (the load generator or other processes were), so its req/s is understated`,
      );
    } else if (cpu > 115) {
      warnings.push(`WARNING: ${s.label} used ${cpu.toFixed(0)}% CPU, more than one core: was it pinned?`);
    }
  }
  return warnings;
}

/** Other work on the machine during the runs makes the numbers noisy; the ratio suffers less than req/s. */
function noiseWarnings(subjects: Subject[]): string[] {
  const other = median(
    subjects.flatMap((s) =>
      s.runs.flatMap((r) => (r.otherCpuPercent === undefined ? [] : [r.otherCpuPercent])),
    ),
  );
  return other > 20
    ? [
        `WARNING: other processes used ${other.toFixed(0)}% of a core during the runs (median): the machine was not quiet, so expect noise`,
      ]
    : [];
}

async function fileStats(file: string): Promise<{ lines: number; bytes: number }> {
  const { size } = await stat(file);
  let lines = 0;
  for await (const chunk of createReadStream(file)) {
    const buffer = chunk as Buffer;
    for (let at = buffer.indexOf(10); at !== -1; at = buffer.indexOf(10, at + 1)) lines++;
  }
  return { lines, bytes: size };
}
