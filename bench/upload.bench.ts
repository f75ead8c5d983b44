// Streaming a 500 MiB APK to PUT /v1/apps/{pkg}/versions/{v} against a bare node:http server that pipes the
// body into a file (the raw cost of loopback to disk), and against the same pipe hashing the body with SHA-256
// as it goes (the limit for any upload that is verified), each server alone on one core; the server's RSS
// growth during the upload; and how much of a body the server reads before it answers 409 for a version
// that exists, with and without Expect: 100-continue.
import { execFileSync } from "node:child_process";
import { mkdir, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { benchResult } from "./lib/bench-result.ts";
import { buildBigApk } from "./lib/big-apk.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { pinLoadGenerator } from "./lib/cpu.ts";
import { formatNumber } from "./lib/format.ts";
import { openTestbay, unlimited } from "./lib/opening.ts";
import { benchDir, repoRoot } from "./lib/paths.ts";
import { memoryStatus } from "./lib/proc.ts";
import { QuietGate } from "./lib/quiet.ts";
import {
  type ReadyMessage,
  type ServerProcess,
  startServerProcess,
  testbayNodeFlags,
} from "./lib/server-process.ts";
import { median } from "./lib/stats.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import { type BenchResult, type Metric, type Row, type RunOptions, ratio } from "./lib/types.ts";
import {
  type ConflictRun,
  measureConflicts,
  removeReceived,
  sha256Of,
  type UploadRun,
  uploadFile,
} from "./lib/upload-client.ts";
import type { SinkReady } from "./servers/sink.ts";

export const name = "upload";
export const description =
  "a 500 MiB APK upload against a raw loopback-to-disk pipe and a SHA-256 hashing one, each server alone on one core; server RSS growth; body bytes read before a 409";

const MiB = 1024 * 1024;
const KiB = 1024;
/** Testbay's default upload limit, 500 MiB: the largest upload it takes. */
const fullBytes = 500 * MiB;
const packageName = "com.example.basic";
const fixture = path.join(repoRoot, "packages/server/test/fixtures/binaries/app-basic.apk");

const plans = {
  full: { bytes: fullBytes, rounds: 7, conflictRounds: 20, quietBudgetSeconds: 60 },
  quick: { bytes: 64 * MiB, rounds: 2, conflictRounds: 3, quietBudgetSeconds: 5 },
};
/** Other processes using more than this (% of one core) make an upload wait, within the plan's budget. */
const quietThresholdPercent = 25;
/** The client reads the file and writes the socket in chunks of this size (against both servers alike). */
const uploadChunkBytes = 1 * MiB;
/** For the 409s: small chunks, so "body bytes the client's kernel took" is known to within one chunk. */
const conflictChunkBytes = 16 * KiB;
const uploadTimeoutMs = 120_000;
const rssIntervalMs = 20;

const targets = {
  /** Against the hashing pipe: what Testbay does beyond hashing and writing should cost little. */
  throughputVsHashing: { op: ">=", value: 0.9 },
  throughput: { op: ">=", value: 0.8 },
  rssGrowthMiB: { op: "<=", value: 64 },
  /** Issue 13: the server lingers after an early 409, reading and dropping at most 1 MiB of the body. */
  bodyForConflictKiB: { op: "<=", value: 1024 },
  /** Issue 13: every client still sending its body reads the 409 (none sees a reset instead). */
  unansweredConflicts: { op: "<=", value: 0 },
  bodyWithExpect: { op: "<=", value: 0 },
} as const;

interface Server {
  label: string;
  short: string;
  process: ServerProcess<ReadyMessage & { port: number }>;
  /** Where this server keeps the bodies it received: the upload's file is deleted after each upload. */
  storeDir: string;
  /** Throws unless the response says the whole file was taken. */
  check(run: UploadRun, body: string): void;
  /** RSS before its first upload. */
  idleRss: number | undefined;
  /** The first upload after the server started. */
  warmup?: UploadRun;
  runs: UploadRun[];
}

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const plan = quick ? plans.quick : plans.full;
  const startedAt = new Date();
  const loadAtStart = os.loadavg()[0] ?? 0;
  const scope = new CleanupScope();
  try {
    const dir = await makeTempDir(name);
    scope.defer(() => rm(dir, { recursive: true, force: true }));

    log(
      `building a ${formatNumber(plan.bytes / MiB)} MiB APK: app-basic.apk + a STORED entry of random bytes…`,
    );
    const apk = await buildBigApk(fixture, path.join(dir, "big.apk"), plan.bytes);
    const hashStarted = performance.now();
    const apkSha256 = await sha256Of(apk.file);
    const hashSeconds = (performance.now() - hashStarted) / 1000;
    log(`built in ${apk.seconds.toFixed(1)} s (written and fsynced), hashed in ${hashSeconds.toFixed(1)} s`);

    const pinning = pinLoadGenerator();
    const cpu = "serverCpu" in pinning ? pinning.serverCpu : undefined;
    const clientCpu = "loadgenCpu" in pinning ? pinning.loadgenCpu : undefined;
    if ("restore" in pinning) scope.defer(pinning.restore);
    const pinned =
      "serverCpu" in pinning
        ? `servers pinned to CPU ${pinning.serverCpu}, the client (this process) to CPU ${pinning.loadgenCpu}, with taskset`
        : `NOT pinned (${pinning.reason}): servers and client share the CPUs`;
    log(pinned);

    // The baselines: node:http piping the body into a file, in the same temp file system as Testbay's data;
    // and the same, hashing the body with SHA-256 on its way.
    const startSink = async (label: string, hash: "sha256" | undefined) => {
      const sinkDir = path.join(dir, label);
      await mkdir(sinkDir);
      const started = await startServerProcess<SinkReady & ReadyMessage>(
        {
          label,
          entry: path.join(benchDir, "servers", "sink.ts"),
          cpu,
          stdoutFile: path.join(dir, `${label}.stdout.log`),
          env: { BENCH_SINK_DIR: sinkDir, ...(hash && { BENCH_SINK_HASH: hash }) },
        },
        scope,
      );
      return { process: started, dir: sinkDir };
    };
    const plainSink = await startSink("sink", undefined);
    const hashingSink = await startSink("sink-sha256", "sha256");

    // The subject: Testbay on the embedded SQLite store, blobs in its data dir.
    const {
      server: testbayProcess,
      ci,
      token,
      dataDir,
    } = await openTestbay({ name: "testbay", dir, scope, cpu });
    await ci.apps.create({ package_name: packageName, platform: "android" });

    const sink: Server = {
      label: "raw pipe: node:http → file",
      short: "raw pipe",
      process: plainSink.process,
      storeDir: plainSink.dir,
      check({ status }, body) {
        const size = (parseJson(body) as { size_bytes?: number }).size_bytes;
        if (status !== 201 || size !== apk.bytes) {
          throw new Error(
            `the raw pipe answered ${status} ${body.slice(0, 300)}; expected 201 and ${apk.bytes} bytes`,
          );
        }
      },
      idleRss: undefined,
      runs: [],
    };
    const hashing: Server = {
      label: "hashing pipe: node:http → SHA-256 → file",
      short: "hashing",
      process: hashingSink.process,
      storeDir: hashingSink.dir,
      check({ status }, body) {
        const got = parseJson(body) as { size_bytes?: number; sha256?: string };
        if (status !== 201 || got.size_bytes !== apk.bytes || got.sha256 !== apkSha256) {
          throw new Error(
            `the hashing pipe answered ${status} ${body.slice(0, 300)}; expected 201, ${apk.bytes} bytes and sha256 ${apkSha256}`,
          );
        }
      },
      idleRss: undefined,
      runs: [],
    };
    const testbay: Server = {
      label: "testbay PUT /v1/apps/…/versions/…",
      short: "testbay",
      process: testbayProcess,
      storeDir: path.join(dataDir, "blobs"),
      check({ status, version }, body) {
        const got = parseJson(body) as {
          size_bytes?: number;
          sha256?: string;
          version?: string;
          binary?: { format?: string };
        };
        if (
          status !== 201 ||
          got.size_bytes !== apk.bytes ||
          got.sha256 !== apkSha256 ||
          got.version !== version ||
          got.binary?.format !== "apk"
        ) {
          throw new Error(
            `testbay answered ${status} ${body.slice(0, 500)}; expected 201 for version ${version}: ${apk.bytes} bytes, sha256 ${apkSha256}, an apk`,
          );
        }
      },
      idleRss: undefined,
      runs: [],
    };
    const servers = [sink, hashing, testbay];

    // The same client, file and request head for both (the raw pipe ignores the path and the token).
    const runId = Date.now().toString(36);
    let uploads = 0;
    const uploadTo = async (server: Server, what: string) => {
      const version = `bench-${runId}-${++uploads}`;
      const { run, body } = await uploadFile(
        {
          url: `http://127.0.0.1:${server.process.ready.port}/v1/apps/${packageName}/versions/${version}`,
          file: apk.file,
          bytes: apk.bytes,
          headers: { "x-api-key": token },
          serverPid: server.process.pid,
          chunkBytes: uploadChunkBytes,
          timeoutMs: uploadTimeoutMs,
          rssIntervalMs,
          ...(clientCpu !== undefined && { clientCpu }),
        },
        version,
      );
      server.check(run, body);
      await removeReceived(server.storeDir, apk.bytes, `${server.short}, ${what}`);
      return run;
    };

    // (a) and (b): a warm-up upload per server (its first after start: the RSS peak to watch), then rounds.
    const quiet = new QuietGate(quietThresholdPercent, plan.quietBudgetSeconds * 1000);
    for (const server of servers) {
      await quiet.wait();
      server.idleRss = memoryStatus(server.process.pid)?.rss;
      server.warmup = await uploadTo(server, "warm-up");
      log(`warm-up    ${describeUpload(server, server.warmup)}`);
    }
    for (let round = 0; round < plan.rounds; round++) {
      // A B C, C B A, A B C…: drift over the run falls on all alike.
      const order = round % 2 === 0 ? servers : [...servers].reverse();
      for (const server of order) {
        await quiet.wait();
        const result = await uploadTo(server, `round ${round + 1}`);
        server.runs[round] = result;
        log(`round ${round + 1}/${plan.rounds}  ${describeUpload(server, result)}`);
      }
    }

    // (c) 409s for a version that exists: the warm-up's.
    const existing = testbay.warmup?.version as string;
    log(`409s for version ${existing}, which exists, ${formatNumber(apk.bytes)} bytes declared…`);
    const conflicts = await measureConflicts({
      port: testbayProcess.ready.port,
      token,
      packageName,
      version: existing,
      file: apk.file,
      declared: apk.bytes,
      pid: testbayProcess.pid,
      rounds: plan.conflictRounds,
      chunkBytes: conflictChunkBytes,
      log,
    });
    const noExpect = conflicts.filter((c) => c.kind === "no-expect");
    const withExpect = conflicts.filter((c) => c.kind === "expect");
    const controls = conflicts.filter((c) => c.kind === "control");

    const mibps = (s: Server) => median(s.runs.map((r) => r.mibPerSecond));
    const growthsMiB = (s: Server) =>
      [s.warmup, ...s.runs].flatMap((r) => (r?.rss ? [r.rss.growth / MiB] : []));
    const sizeLabel = `${formatNumber(plan.bytes / MiB)} MiB`;
    const bodyKiB = (runs: ConflictRun[]) =>
      runs.map((r) => (r.serverBodyBytes === undefined ? Number.POSITIVE_INFINITY : r.serverBodyBytes / KiB));
    const ratios = [
      ratio(
        "testbay ÷ raw pipe, MiB/s",
        mibps(testbay) / mibps(sink),
        targets.throughput,
        testbay.runs.map((r, i) => r.mibPerSecond / (sink.runs[i]?.mibPerSecond ?? Number.NaN)),
      ),
      ratio(
        "testbay ÷ hashing pipe (SHA-256), MiB/s",
        mibps(testbay) / mibps(hashing),
        targets.throughputVsHashing,
        testbay.runs.map((r, i) => r.mibPerSecond / (hashing.runs[i]?.mibPerSecond ?? Number.NaN)),
      ),
      ratio(
        "hashing pipe ÷ raw pipe, MiB/s (what SHA-256 costs; no target)",
        mibps(hashing) / mibps(sink),
        undefined,
        hashing.runs.map((r, i) => r.mibPerSecond / (sink.runs[i]?.mibPerSecond ?? Number.NaN)),
      ),
      ratio(
        `testbay peak RSS growth in one ${sizeLabel} upload, MiB (absolute; max; warm-up first)`,
        Math.max(...growthsMiB(testbay)),
        targets.rssGrowthMiB,
        growthsMiB(testbay),
      ),
      ratio(
        "raw pipe peak RSS growth, MiB (for comparison)",
        Math.max(...growthsMiB(sink)),
        undefined,
        growthsMiB(sink),
      ),
      ratio(
        `body KiB the server read for its 409 in all, lingering included, no Expect (absolute; max of ${noExpect.length})`,
        Math.max(...bodyKiB(noExpect)),
        targets.bodyForConflictKiB,
      ),
      ratio(
        `409s without Expect that never reached the client, of ${noExpect.length} (absolute)`,
        noExpect.filter((r) => r.status === undefined).length,
        targets.unansweredConflicts,
      ),
      ratio(
        `body bytes sent before the 409 with Expect: 100-continue (absolute; max of ${withExpect.length})`,
        Math.max(...withExpect.map((r) => r.bodySent)),
        targets.bodyWithExpect,
      ),
    ];

    const allUploads = servers.flatMap((s) => [s.warmup, ...s.runs]);
    const notes = [
      `file: ${path.basename(fixture)} + a STORED entry ${apk.entry} of ${formatNumber(apk.entryBytes)} random bytes = ${formatNumber(apk.bytes)} bytes (${sizeLabel}${plan.bytes === fullBytes ? ", Testbay's upload limit" : ""}), a zip written by bench/lib/big-apk.ts in ${apk.seconds.toFixed(1)} s (fsynced) + ${hashSeconds.toFixed(1)} s to hash it, in a temp dir removed afterwards; the client reads it from the page cache`,
      `upload: PUT with Content-Length, the file piped by node:http (agent: false, ${uploadChunkBytes / MiB} MiB reads); the same client, file and request head for both servers; time = from the request to the end of the response; one warm-up upload per server, then ${plan.rounds} rounds alternating A B C / C B A; MiB/s and the ratio are medians; a fresh version per upload`,
      "every upload is checked: Testbay 201 with size_bytes and sha256 of the file, format apk; the raw pipe 201 with the size; the hashing pipe 201 with the size and sha256. The stored file is then deleted, before the kernel writes it back, so one upload's writeback never lands on the next",
      `servers: one child process each (node --import tsx bench/servers/{sink,testbay}.ts; Testbay with its launcher's flags: ${testbayNodeFlags.join(" ")}), all writing to ${os.tmpdir()} (${fsType(os.tmpdir())}); Testbay: buildApp, embedded SQLite, file storage in its data dir, TESTBAY_LOG_LEVEL=warn, rate limit ${unlimited}/s; raw pipe: node:http, pipeline(request, fs.createWriteStream), 201 when written; hashing pipe: the same with a 'data' listener feeding crypto.createHash("sha256"), 201 with the digest`,
      pinned,
      "CPU: server = the server process, % of one core; client = this process; client core = everything that ran on the client's CPU, other processes included. The kernel's loopback TCP receive work runs on the sender's core, or on the receiver's when the receiver is inside a read, so the server/client split varies from run to run",
      `RSS: the server's VmRSS sampled every ${rssIntervalMs} ms during each upload (longest gap ${formatNumber(Math.max(...allUploads.map((r) => r?.rss?.longestGapMs ?? 0)))} ms), VmHWM read before and after (when it rose, it is the exact peak); growth = peak − RSS just before the upload; idle RSS = before the first upload`,
      `409: raw socket, PUT for the existing version with Content-Length ${formatNumber(apk.bytes)}; ${plan.conflictRounds} rounds of three: headers only (the control); headers then the body as fast as the socket takes it, ${conflictChunkBytes / KiB} KiB writes, until the answer or the close (no Expect); headers with Expect: 100-continue, then up to 5 s for 100 Continue or the answer`,
      `409, server read = growth of the server's /proc/PID/io rchar (every byte its read() calls returned, socket reads included) − the request head − ${formatNumber(controls[0]?.otherReads ?? 0)} B the controls read beyond their head (median): body bytes the server took in; "by answer" = read by the time the client noticed the answer (an upper bound on what was read before it), "in all" = by the time the connection was closed (the target's measure). One socket read of up to 64 KiB may carry head and body together`,
      "409, client sent = body bytes the client's kernel accepted (write callbacks) before the answer arrived, and in all: loopback socket buffers take hundreds of KiB the server never reads, so this says nothing of what the server consumed",
      `before each upload the client waited for other processes to use under ${quietThresholdPercent}% of a core: ${quiet.waitedSeconds.toFixed(1)} s waited${quiet.gaveUp > 0 ? `; ${quiet.gaveUp} upload${quiet.gaveUp === 1 ? "" : "s"} started busy once the ${plan.quietBudgetSeconds} s budget was spent` : ""}`,
      ...warnings(servers, noExpect),
    ];

    return benchResult(quick, startedAt, {
      name,
      description,
      environment: {
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
        // os.cpus(), not availableParallelism(): this process is pinned to one CPU by now.
        cpu: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "unknown"}`,
        fastify: testbayProcess.ready.fastifyVersion,
        tmpFileSystem: fsType(os.tmpdir()),
        loadAverageAtStart: Math.round(loadAtStart * 100) / 100,
      },
      detailLabel: "MiB/s by round",
      rows: servers.map((s) => ({
        label: s.label,
        metrics: uploadMetrics(s),
        detail: s.runs.map((r) => r.mibPerSecond.toFixed(0)).join(" "),
      })),
      sections: [
        {
          title: `409 for a version that exists, ${sizeLabel} declared: median of ${plan.conflictRounds} rounds (server read = body bytes, from rchar)`,
          detailLabel: "server read in all, KiB: value ×rounds",
          rows: [
            conflictRow("without Expect, body sent at once", noExpect),
            conflictRow("with Expect: 100-continue", withExpect),
            conflictRow("control: headers only, no body", controls),
          ],
        },
      ],
      ratios,
      notes,
      details: {
        plan: { ...plan, uploadChunkBytes, conflictChunkBytes, rssIntervalMs, quietThresholdPercent },
        file: { ...apk, sha256: apkSha256, hashSeconds },
        quiet: { waitedSeconds: quiet.waitedSeconds, uploadsStartedBusy: quiet.gaveUp },
        uploads: Object.fromEntries(
          servers.map((s) => [s.short, { idleRss: s.idleRss, warmup: s.warmup, rounds: s.runs }]),
        ),
        conflicts,
      },
    });
  } finally {
    await scope.close();
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return {};
  }
}

function describeUpload(server: Server, run: UploadRun): string {
  return (
    `${server.short.padEnd(8)}  ${run.mibPerSecond.toFixed(0).padStart(5)} MiB/s  ${run.seconds.toFixed(2)} s` +
    `  CPU: server ${formatNumber(run.serverCpuPercent)}%, client ${formatNumber(run.clientCpuPercent)}%, client core ${formatNumber(run.clientCoreBusyPercent)}%` +
    `  RSS +${run.rss ? (run.rss.growth / MiB).toFixed(1) : "—"} MiB${run.rss?.exact ? " (VmHWM)" : ""}`
  );
}

function uploadMetrics(s: Server): Metric[] {
  const of = (pick: (r: UploadRun) => number | undefined) =>
    median(s.runs.map(pick).filter((v): v is number => v !== undefined));
  const growths = [s.warmup, ...s.runs].flatMap((r) => (r?.rss ? [r.rss.growth / MiB] : []));
  return [
    { label: "MiB/s", value: of((r) => r.mibPerSecond), unit: "" },
    { label: "server CPU", value: of((r) => r.serverCpuPercent), unit: "%" },
    { label: "client CPU", value: of((r) => r.clientCpuPercent), unit: "%" },
    { label: "client core", value: of((r) => r.clientCoreBusyPercent), unit: "%" },
    { label: "idle RSS", value: (s.idleRss ?? Number.NaN) / MiB, unit: "MiB" },
    { label: "peak RSS growth", value: Math.max(...growths), unit: "MiB", decimals: 1 },
  ];
}

/** "0.0 ×17, 16.0 ×1, 80.0 ×2" */
function distribution(values: number[]): string {
  const counts = new Map<string, number>();
  for (const value of [...values].sort((a, b) => a - b)) {
    const key = value.toFixed(1);
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  return [...counts].map(([value, count]) => (count === 1 ? value : `${value} ×${count}`)).join(", ");
}

function conflictRow(label: string, runs: ConflictRun[]): Row {
  const of = (pick: (r: ConflictRun) => number | undefined) =>
    median(runs.map(pick).filter((v): v is number => v !== undefined));
  const outcomes = new Map<string, number>();
  for (const r of runs) {
    const outcome = r.status === undefined ? `no answer (${r.error ?? "closed"})` : String(r.status);
    outcomes.set(outcome, (outcomes.get(outcome) ?? 0) + 1);
  }
  const seen = [...outcomes].map(([outcome, count]) => `${outcome} ×${count}`).join(", ");
  const kib = (bytes: number | undefined) => (bytes === undefined ? [] : [bytes / KiB]);
  const body = runs.flatMap((r) => kib(r.serverBodyBytes));
  const before = runs.flatMap((r) => kib(r.serverBodyBytesBeforeAnswer));
  return {
    label: `${label} → ${seen}`,
    metrics: [
      {
        label: "server read by answer",
        value: of((r) => r.serverBodyBytesBeforeAnswer) / KiB,
        unit: "KiB",
        decimals: 1,
      },
      { label: "max", value: Math.max(...before), unit: "KiB", decimals: 1 },
      { label: "server read in all", value: of((r) => r.serverBodyBytes) / KiB, unit: "KiB", decimals: 1 },
      { label: "max", value: Math.max(...body), unit: "KiB", decimals: 1 },
      { label: "client sent before answer", value: of((r) => r.bodySentBeforeResponse) / KiB, unit: "KiB" },
      { label: "client in all", value: of((r) => r.bodySent) / KiB, unit: "KiB" },
      { label: "answer after", value: of((r) => r.responseMs), unit: "ms", decimals: 1 },
    ],
    detail: distribution(body),
  };
}

function warnings(servers: Server[], noExpect: ConflictRun[]): string[] {
  const out: string[] = [];
  for (const s of servers) {
    const core = median(s.runs.flatMap((r) => r.clientCoreBusyPercent ?? []));
    if (core >= 85) {
      out.push(
        `WARNING: the client's core was ${core.toFixed(0)}% busy during the uploads to ${s.short}: near its limit, so that MiB/s may be understated`,
      );
    }
    const cpu = median(s.runs.flatMap((r) => r.serverCpuPercent ?? []));
    if (cpu < 85) {
      out.push(
        `${s.short} used ${cpu.toFixed(0)}% of its core: not CPU-bound all the time; it also waited (for the client, the kernel's loopback work on the client's core, or its own file writes)`,
      );
    }
  }
  const unanswered = noExpect.filter((c) => c.status === undefined).length;
  if (unanswered > 0) {
    out.push(
      `${unanswered} of ${noExpect.length} 409s without Expect never reached the client: the connection was reset (EPIPE/ECONNRESET) before the client read the 409: the server closed its socket with body bytes unread before the client saw the answer (its lingering close should prevent this)`,
    );
  }
  return out;
}

/** The type of the file system `dir` is on: findmnt (util-linux, like taskset) names ext4 as such. */
function fsType(dir: string): string {
  for (const [command, args] of [
    ["findmnt", ["-n", "-o", "FSTYPE", "-T", dir]],
    ["stat", ["-f", "-c", "%T", dir]],
  ] as const) {
    try {
      const type = execFileSync(command, args, {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "ignore"],
      }).trim();
      if (type) return type;
    } catch {
      // try the next way
    }
  }
  return "unknown";
}
