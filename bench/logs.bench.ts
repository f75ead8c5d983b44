// Streaming a big execution log must not hold up anyone else: GET /v1/me, one request at a time, at rest and
// while three readers stream a ~64 MiB log (GET /v1/executions/{id}/log), on the same server in the same run.
// The log is built through the agent API as an agent sends it. This replaces the timing assertion that
// packages/server/src/features/executions/logs.int.test.ts once made (GET /v1/me within 1 s meanwhile).
import { rm } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { monitorEventLoopDelay } from "node:perf_hooks";
import { setTimeout as sleep } from "node:timers/promises";
import { createAgentClient } from "./lib/agent-client.ts";
import { benchResult } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { formatNumber } from "./lib/format.ts";
import { openTestbay, sdkFor, type TestbayOpening, unlimited } from "./lib/opening.ts";
import { repoRoot } from "./lib/paths.ts";
import { SequentialClient, summarize } from "./lib/sequential.ts";
import { median } from "./lib/stats.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import { type BenchResult, type Row, type RunOptions, ratio } from "./lib/types.ts";

export const name = "logs";
export const description =
  "GET /v1/me p50/p99 while 3 readers stream a 64 MiB execution log, against GET /v1/me at rest";

/** The bound the integration test asserted on the slowest GET /v1/me while the log streamed. */
const boundMs = 1000;
const readers = 3;
/** Events per POST …/events: the most the route takes, as an agent with a backlog sends them. */
const perBatch = 1000;
/** Pause between two probes of GET /v1/me, as the integration test probed. */
const probeGapMs = 20;
const warmProbes = 20;
/** Upper bound on probes during one streaming round, whatever the time bound allows. */
const maxStreamProbes = 20_000;
/** Sampling interval of this process's event-loop delay while the readers stream. */
const loopDelayResolutionMs = 10;

const at = "2026-11-23T10:00:00.000Z";
/** Each line is this plus its seq: ~116 characters, ~150 bytes in the log with its time and stream. */
const lineText = "y".repeat(110);
/** The log's first line: its one device run's one attempt (features/executions/log-store.ts). */
const sectionHeader = "=== device 1, attempt 1 ===\n";

const sizes = {
  full: { batches: 500, rounds: 3, restProbes: 250, buildMaxSeconds: 900, streamMaxSeconds: 180 },
  quick: { batches: 50, rounds: 2, restProbes: 50, buildMaxSeconds: 120, streamMaxSeconds: 30 },
};

interface ReadResult {
  status: number;
  bytes: number;
  lines: number;
  seconds: number;
  /** Why the read stopped before the end of the response, if it did. */
  error?: string;
}

interface Round {
  rest: number[];
  streaming: number[];
  reads: ReadResult[];
  /** This process's event-loop delay while streaming: what of a probe's time may be the client's own. */
  loopDelayP99Ms: number;
  loopDelayMaxMs: number;
  cutShort: boolean;
}

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const size = quick ? sizes.quick : sizes.full;
  const startedAt = new Date();
  const loadAtStart = os.loadavg()[0] ?? 0;
  const scope = new CleanupScope();
  try {
    const dir = await makeTempDir(name);
    scope.defer(() => rm(dir, { recursive: true, force: true }));
    const opening = await openTestbay({
      name,
      dir,
      scope,
      env: {
        // No in-process agent to take the run this benchmark claims itself.
        TESTBAY_LOCAL_AGENT: "false",
        TESTBAY_AGENT_RATE_LIMIT_BURST: unlimited,
        TESTBAY_AGENT_RATE_LIMIT_PER_SECOND: unlimited,
        // Posting events does not renew a lease, and this agent sends no heartbeats while it posts.
        TESTBAY_LEASE_TTL_SECONDS: "3600",
      },
    });
    log("creating an agent client (testbay-server client create --role agent)…");
    const agentCredentials = await createAgentClient(opening);
    const agentToken = await sdkFor(opening.origin, opening.server.ready, agentCredentials).accessToken();
    const { executionId, lease } = await claimedRun(opening, agentToken);

    log(`building the log: ${size.batches} batches of ${perBatch} lines through POST …/events…`);
    const built = await buildLog(opening.origin, agentToken, lease, size.batches, size.buildMaxSeconds, log);
    const logMiB = built.bytes / 2 ** 20;
    log(
      `built ${formatNumber(logMiB, 1)} MiB (${formatNumber(built.lines)} lines) in ${built.seconds.toFixed(1)} s`,
    );

    const probe = new SequentialClient(opening.origin, { "x-api-key": opening.token });
    scope.defer(() => probe.close());
    for (let i = 0; i < warmProbes; i++) await probe.send({ path: "/v1/me" });
    const rounds: Round[] = [];
    for (let r = 0; r < size.rounds; r++) {
      const rest = await probeWhile(probe, size.restProbes, size.streamMaxSeconds, () => true);
      const streamed = await streamRound(opening, executionId, probe, size.streamMaxSeconds);
      rounds.push({ rest: rest.times, ...streamed });
      const s = summarize(streamed.streaming);
      log(
        `round ${r + 1}/${size.rounds}: at rest p99 ${summarize(rest.times).p99Ms.toFixed(1)} ms; streaming p99 ${s.p99Ms.toFixed(1)} ms over ${streamed.streaming.length} probes; readers ${streamed.reads.map((x) => `${formatNumber(x.bytes / 2 ** 20 / x.seconds, 1)} MiB/s`).join(", ")}`,
      );
    }
    return report(quick, startedAt, size, built, rounds, loadAtStart);
  } finally {
    await scope.close();
  }
}

async function api(origin: string, token: string, route: string, body: unknown) {
  const response = await fetch(`${origin}/v1${route}`, {
    method: "POST",
    headers: { "x-api-key": token, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (response.status !== 200)
    throw new Error(`POST /v1${route} answered ${response.status}: ${text.slice(0, 500)}`);
  return JSON.parse(text) as Record<string, unknown>;
}

/** A one-step inspect plan run and claimed by the agent client: the execution and the lease to report on. */
async function claimedRun(
  opening: TestbayOpening,
  agentToken: string,
): Promise<{ executionId: string; lease: string }> {
  const { ci, origin, token } = opening;
  await ci.apps.create({ package_name: "com.example.basic", platform: "android" });
  await ci.versions.upload({
    packageName: "com.example.basic",
    version: "1.2.3",
    file: path.join(repoRoot, "packages/server/test/fixtures/binaries/app-basic.apk"),
  });
  const plan = await ci.testPlans.create({
    name: "logs",
    package_name: "com.example.basic",
    devices: [],
    steps: [{ type: "inspect", expect: { debuggable: false } }],
  } as unknown as Parameters<typeof ci.testPlans.create>[0]);
  const triggered = await api(origin, token, "/testplan/run", {
    test_plan_id: plan.id,
    package_name: "com.example.basic",
    version: "1.2.3",
  });
  const executionId = (triggered.execution as { id: string }).id;
  const claimed = await api(origin, agentToken, "/agent/claim", {
    agent_id: "bench-logs",
    devices: [],
    host: true,
    step_types: ["inspect"],
    wait_seconds: 0,
  });
  const job = claimed.job as { execution_id: string; lease_id: string };
  if (job.execution_id !== executionId) {
    throw new Error(`the claim handed out execution ${job.execution_id}, not ${executionId}`);
  }
  return { executionId, lease: job.lease_id };
}

/** Posts the log as an agent does, one batch at a time; what GET …/log should then answer, byte for byte. */
async function buildLog(
  origin: string,
  agentToken: string,
  lease: string,
  batches: number,
  maxSeconds: number,
  log: (line: string) => void,
): Promise<{ bytes: number; lines: number; seconds: number }> {
  const agent = new SequentialClient(origin, { "x-api-key": agentToken }, 120_000);
  const prefixBytes = `${at} [stdout] `.length;
  let bytes = sectionHeader.length;
  const started = performance.now();
  try {
    for (let b = 0; b < batches; b++) {
      if (performance.now() - started > maxSeconds * 1000) {
        throw new Error(`building the log: ${b} of ${batches} batches posted in ${maxSeconds} s, the bound`);
      }
      const events = Array.from({ length: perBatch }, (_, i) => {
        const seq = b * perBatch + i;
        const line = `${lineText}${seq}`;
        bytes += prefixBytes + line.length + 1;
        return { seq, type: "log", at, stream: "stdout", line };
      });
      const response = await agent.send({
        path: `/v1/agent/jobs/${encodeURIComponent(lease)}/events`,
        body: JSON.stringify({ events }),
      });
      if (response.status !== 200) {
        throw new Error(
          `POST …/events answered ${response.status}: ${response.body.toString().slice(0, 500)}`,
        );
      }
      if ((b + 1) % 100 === 0) log(`  ${b + 1}/${batches} batches`);
    }
  } finally {
    agent.close();
  }
  return { bytes, lines: 1 + batches * perBatch, seconds: (performance.now() - started) / 1000 };
}

/** GET /v1/me every probeGapMs while `going()` (and within the bounds); the times of probes that ended so. */
async function probeWhile(
  probe: SequentialClient,
  maxCount: number,
  maxSeconds: number,
  going: () => boolean,
): Promise<{ times: number[]; cutShort: boolean }> {
  const times: number[] = [];
  const deadline = performance.now() + maxSeconds * 1000;
  for (let i = 0; i < maxCount && going(); i++) {
    if (performance.now() > deadline) return { times, cutShort: true };
    const response = await probe.send({ path: "/v1/me" });
    if (response.status !== 200) {
      throw new Error(`GET /v1/me answered ${response.status}: ${response.body.toString().slice(0, 500)}`);
    }
    // A probe that ended after the last reader did was not (all) under the load it is meant to measure.
    if (going()) times.push(response.ms);
    await sleep(probeGapMs);
  }
  return { times, cutShort: false };
}

/** Three readers of the log at once, GET /v1/me probed until the last is done. */
async function streamRound(
  opening: TestbayOpening,
  executionId: string,
  probe: SequentialClient,
  maxSeconds: number,
): Promise<Omit<Round, "rest">> {
  const loopDelay = monitorEventLoopDelay({ resolution: loopDelayResolutionMs });
  loopDelay.enable();
  let reading = readers;
  const reads = Array.from({ length: readers }, () =>
    readLog(opening.origin, opening.token, executionId, maxSeconds * 1000).finally(() => {
      reading--;
    }),
  );
  const probed = await probeWhile(probe, maxStreamProbes, maxSeconds, () => reading > 0);
  const results = await Promise.all(reads);
  loopDelay.disable();
  return {
    streaming: probed.times,
    reads: results,
    // The histogram counts the sampling timer's own interval in every value.
    loopDelayP99Ms: Math.max(0, loopDelay.percentile(99) / 1e6 - loopDelayResolutionMs),
    loopDelayMaxMs: Math.max(0, loopDelay.max / 1e6 - loopDelayResolutionMs),
    cutShort: probed.cutShort,
  };
}

/** Reads the whole log on a connection of its own, counting bytes and lines; never throws. */
function readLog(origin: string, token: string, executionId: string, timeoutMs: number): Promise<ReadResult> {
  return new Promise((resolve) => {
    const started = performance.now();
    let status = 0;
    let bytes = 0;
    let lines = 0;
    let done = false;
    const finish = (error?: string) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      resolve({
        status,
        bytes,
        lines,
        seconds: (performance.now() - started) / 1000,
        ...(error && { error }),
      });
    };
    const request = http.get(
      `${origin}/v1/executions/${executionId}/log`,
      { headers: { "x-api-key": token }, agent: false },
      (response) => {
        status = response.statusCode ?? 0;
        let ended = false;
        response.on("data", (chunk: Buffer) => {
          bytes += chunk.length;
          for (let i = chunk.indexOf(10); i !== -1; i = chunk.indexOf(10, i + 1)) lines++;
        });
        response.on("end", () => {
          ended = true;
        });
        response.on("error", (error) => finish(error.message));
        response.on("close", () => finish(ended ? undefined : "the response closed before its end"));
      },
    );
    const timer = setTimeout(
      () => request.destroy(new Error(`cut at ${timeoutMs / 1000} s, the bound`)),
      timeoutMs,
    );
    request.on("error", (error) => finish(error.message));
  });
}

function report(
  quick: boolean,
  startedAt: Date,
  size: (typeof sizes)["full"],
  built: { bytes: number; lines: number; seconds: number },
  rounds: Round[],
  loadAtStart: number,
): BenchResult {
  const logMiB = built.bytes / 2 ** 20;
  const rest = summarize(rounds.flatMap((r) => r.rest));
  const streaming = summarize(rounds.flatMap((r) => r.streaming));
  const restP99s = rounds.map((r) => summarize(r.rest).p99Ms);
  const streamingP99s = rounds.map((r) => summarize(r.streaming).p99Ms);
  const complete = (x: ReadResult) =>
    x.status === 200 && x.error === undefined && x.bytes === built.bytes && x.lines === built.lines;
  const reads = rounds.flatMap((r) => r.reads);
  const completeReads = reads.filter(complete).length;
  const mibPerSecond = (x: ReadResult) => x.bytes / 2 ** 20 / x.seconds;
  const byRound = (values: number[]) => values.map((v) => v.toFixed(1)).join(" / ");
  const probeRow = (label: string, s: ReturnType<typeof summarize>, count: number, p99s: number[]): Row => ({
    label,
    metrics: [
      { label: "probes", value: count, unit: "" },
      { label: "p50", value: s.p50Ms, unit: "ms", decimals: 2 },
      { label: "p99", value: s.p99Ms, unit: "ms", decimals: 2 },
      { label: "max", value: s.maxMs, unit: "ms", decimals: 2 },
    ],
    detail: byRound(p99s),
  });
  const readerRows: Row[] = rounds.flatMap((r, i) =>
    r.reads.map((x, j) => ({
      label: `round ${i + 1}, reader ${j + 1}`,
      metrics: [
        { label: "read", value: x.bytes / 2 ** 20, unit: "MiB", decimals: 2 },
        { label: "lines", value: x.lines, unit: "" },
        { label: "time", value: x.seconds, unit: "s", decimals: 2 },
        { label: "throughput", value: mibPerSecond(x), unit: "MiB/s", decimals: 1 },
      ],
      detail: complete(x)
        ? "every byte and line"
        : `MISMATCH: status ${x.status}, ${formatNumber(x.bytes - built.bytes)} bytes and ${formatNumber(x.lines - built.lines)} lines off${x.error ? `; ${x.error}` : ""}`,
    })),
  );
  const ratios = [
    ratio(
      `GET /v1/me p99 while ${readers} readers stream ${formatNumber(logMiB, 1)} MiB ÷ ${boundMs} ms`,
      median(streamingP99s) / boundMs,
      { op: "<=", value: 1 },
      streamingP99s.map((p) => p / boundMs),
    ),
    ratio(
      "GET /v1/me p99 while streaming ÷ p99 at rest",
      median(streamingP99s) / median(restP99s),
      undefined,
      streamingP99s.map((p, i) => p / (restP99s[i] as number)),
    ),
    ratio("reads that got every byte and line ÷ reads", completeReads / reads.length, { op: ">=", value: 1 }),
  ];
  const notes = [
    `the log: one execution of a one-step inspect plan (devices: []), claimed by an agent client (testbay-server client create --role agent); ${size.batches} POST /v1/agent/jobs/{lease}/events of ${perBatch} {seq, type: "log", at, stream: "stdout", line} events each, lines of ${lineText.length} characters and the seq, one batch after the other: ${formatNumber(built.lines)} lines, ${formatNumber(built.bytes)} bytes (${formatNumber(logMiB, 1)} MiB) as GET …/log answers it, posted in ${built.seconds.toFixed(1)} s (${formatNumber(logMiB / built.seconds, 1)} MiB/s)`,
    `${size.rounds} rounds, each: GET /v1/me at rest (${size.restProbes} probes), then ${readers} readers of GET /v1/executions/{id}/log at once while GET /v1/me is probed until the last reader is done (probes that ended after it are left out); ${warmProbes} warm-up probes before the first round. Ratios: median of the rounds' p99s, then round by round; the rows pool every round's probes`,
    `probes: one at a time over one keep-alive connection with the ci client's token, ${probeGapMs} ms between them (as the integration test probed); latency from writing the request to the last byte of the response`,
    `readers: in this process (node:http, a connection each, as fast as they can read), counting bytes and newlines against what was posted; throughput = bytes ÷ the reader's own time. Median reader ${formatNumber(median(reads.map(mibPerSecond)), 1)} MiB/s. This process's event-loop delay while streaming, beyond its ${loopDelayResolutionMs} ms sampling timer (part of a probe's time can be the client's own): p99 ${rounds.map((r) => r.loopDelayP99Ms.toFixed(1)).join(" / ")} ms, max ${rounds.map((r) => r.loopDelayMaxMs.toFixed(1)).join(" / ")} ms by round`,
    `server: bench/servers/testbay.ts (buildApp from TESTBAY_* variables), embedded SQLite and file blob store in its data dir, TESTBAY_LOG_LEVEL=warn, TESTBAY_LOCAL_AGENT=false, TESTBAY_LEASE_TTL_SECONDS=3600 (no heartbeats are sent), rate limits (ci and agent) raised to ${unlimited}; bounds: ${size.buildMaxSeconds} s to build the log, ${size.streamMaxSeconds} s per series and read`,
    `nothing pinned: the server, the readers and the probes share ${os.availableParallelism()} CPUs; load average (1 min) ${loadAtStart.toFixed(2)} at the start, ${(os.loadavg()[0] ?? 0).toFixed(2)} at the end (other work on the machine shows in the numbers)`,
    ...rounds.flatMap((r, i) => (r.cutShort ? [`round ${i + 1}: probing cut short by the time bound`] : [])),
  ];
  return benchResult(quick, startedAt, {
    name,
    description,
    environment: { node: process.version },
    rows: [
      probeRow(
        "GET /v1/me at rest (baseline)",
        rest,
        rounds.reduce((n, r) => n + r.rest.length, 0),
        restP99s,
      ),
      probeRow(
        `GET /v1/me while ${readers} readers stream`,
        streaming,
        rounds.reduce((n, r) => n + r.streaming.length, 0),
        streamingP99s,
      ),
    ],
    detailLabel: "p99 ms by round",
    sections: [{ title: `readers of the ${formatNumber(logMiB, 1)} MiB log`, rows: readerRows }],
    ratios,
    notes,
    details: { built, rounds },
  });
}
