// The client side of the upload benchmark: a streamed upload over node:http, and uploads refused from their
// headers (409) driven over a raw socket to count what the client sent and what the server read.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { readdir, rm, stat } from "node:fs/promises";
import http from "node:http";
import net from "node:net";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { cpuBusySeconds, ownCpuSeconds, processCpuSeconds } from "./cpu.ts";
import { bytesRead, type RssPeak, RssSampler } from "./proc.ts";
import { median } from "./stats.ts";

const MiB = 1024 * 1024;

export interface UploadOptions {
  url: string;
  file: string;
  bytes: number;
  headers: Record<string, string>;
  /** The server process: its CPU and RSS are measured during the upload. */
  serverPid: number;
  chunkBytes: number;
  timeoutMs: number;
  rssIntervalMs: number;
  /** The CPU the client runs on, to tell how busy that core was (the kernel's loopback work lands there). */
  clientCpu?: number;
}

export interface UploadRun {
  version: string;
  status: number;
  seconds: number;
  mibPerSecond: number;
  /** CPU the server used during the upload, in % of one core. */
  serverCpuPercent: number | undefined;
  /** CPU this process (the client) used, in % of one core. */
  clientCpuPercent: number;
  /** How busy the client's core was, in %: the client and the kernel's work on that core (loopback TCP). */
  clientCoreBusyPercent: number | undefined;
  rss: RssPeak | undefined;
}

/**
 * PUT of the file with Content-Length, piped from disk by node:http on a connection of its own, timed from the
 * request to the end of the response. Meanwhile the server's RSS is sampled and its CPU time measured.
 */
export async function uploadFile(
  options: UploadOptions,
  version: string,
): Promise<{ run: UploadRun; body: string }> {
  const url = new URL(options.url);
  if (url.hostname !== "127.0.0.1") throw new Error(`benchmarks target 127.0.0.1 only, not ${url.hostname}`);
  const serverCpuBefore = processCpuSeconds(options.serverPid);
  const ownCpuBefore = ownCpuSeconds();
  const coreBefore = options.clientCpu === undefined ? undefined : cpuBusySeconds(options.clientCpu);
  const sampler = RssSampler.begin(options.serverPid, options.rssIntervalMs);
  const started = performance.now();
  let response: { status: number; body: string };
  let rss: RssPeak | undefined;
  try {
    response = await new Promise((resolve, reject) => {
      const request = http.request(url, {
        method: "PUT",
        agent: false,
        headers: {
          ...options.headers,
          "content-type": "application/octet-stream",
          "content-length": String(options.bytes),
        },
        signal: AbortSignal.timeout(options.timeoutMs),
      });
      request.on("error", (error) => reject(new Error(`PUT ${url.pathname} failed: ${error.message}`)));
      request.on("response", (incoming) => {
        const chunks: Buffer[] = [];
        incoming.on("data", (chunk: Buffer) => chunks.push(chunk));
        incoming.on("end", () =>
          resolve({ status: incoming.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        incoming.on("error", reject);
      });
      const source = createReadStream(options.file, { highWaterMark: options.chunkBytes });
      source.on("error", (error) => request.destroy(error));
      source.pipe(request);
    });
  } finally {
    rss = sampler?.stop();
  }
  const seconds = (performance.now() - started) / 1000;
  const serverCpuAfter = processCpuSeconds(options.serverPid);
  const coreAfter = options.clientCpu === undefined ? undefined : cpuBusySeconds(options.clientCpu);
  const serverCpu =
    serverCpuBefore === undefined || serverCpuAfter === undefined
      ? undefined
      : serverCpuAfter - serverCpuBefore;
  return {
    run: {
      version,
      status: response.status,
      seconds,
      mibPerSecond: options.bytes / MiB / seconds,
      serverCpuPercent: serverCpu === undefined ? undefined : (serverCpu / seconds) * 100,
      clientCpuPercent: ((ownCpuSeconds() - ownCpuBefore) / seconds) * 100,
      clientCoreBusyPercent:
        coreBefore === undefined || coreAfter === undefined
          ? undefined
          : ((coreAfter - coreBefore) / seconds) * 100,
      rss,
    },
    body: response.body,
  };
}

/**
 * Deletes the file an upload left under `dir` (any depth), found by its size: exactly one must be there.
 * Deleted before the kernel writes it back, it costs the next upload no disk I/O.
 */
export async function removeReceived(dir: string, bytes: number, what: string): Promise<void> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files: string[] = [];
  for (const entry of entries) {
    if (!entry.isFile()) continue;
    const file = path.join(entry.parentPath, entry.name);
    if ((await stat(file)).size === bytes) files.push(file);
  }
  if (files.length !== 1) {
    throw new Error(
      `${what}: expected one stored file of ${bytes} bytes under ${dir}, found ${files.length}`,
    );
  }
  await Promise.all(files.map((file) => rm(file, { force: true })));
}

export async function sha256Of(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file, { highWaterMark: MiB })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

export type ConflictKind = "control" | "no-expect" | "expect";

export interface ConflictRun {
  kind: ConflictKind;
  round: number;
  /** The final response's status; undefined when none reached the client. */
  status: number | undefined;
  /** The server sent 100 Continue (it should not, for a refused upload). */
  continued: boolean;
  headBytes: number;
  /** Body bytes the client's kernel had accepted when the final response's head arrived. */
  bodySentBeforeResponse: number;
  /** Body bytes the client's kernel accepted in all, until the connection ended. */
  bodySent: number;
  /** Growth of the server's rchar over the request: every byte its read() calls returned. */
  serverRead: number | undefined;
  /** What the control requests read beyond their head (median): reads that are not the request's. */
  otherReads: number | undefined;
  /** serverRead − headBytes − otherReads: the body bytes the server took in. */
  serverBodyBytes: number | undefined;
  /** The same, up to the moment the final response's head reached the client; the rest was read after it. */
  serverBodyBytesBeforeAnswer: number | undefined;
  /** Growth of the server's rchar up to that moment. */
  serverReadBeforeAnswer: number | undefined;
  /** From sending the head to the final response's head, at the client. */
  responseMs: number | undefined;
  closedByServer: boolean;
  /** The socket error the client saw, if any (ECONNRESET, EPIPE: the server closed with body unread). */
  error: string | undefined;
}

export interface ConflictOptions {
  port: number;
  token: string;
  packageName: string;
  /** A version that exists, so the server answers 409. */
  version: string;
  file: string;
  /** The Content-Length declared: the file's size. */
  declared: number;
  /** The server process, whose rchar is read before and after each request. */
  pid: number;
  rounds: number;
  chunkBytes: number;
  log(line: string): void;
}

/**
 * PUTs for a version that exists, over a raw socket, in rounds of three: headers only (the control, which
 * tells what a request reads besides its body), headers then the body as fast as the socket takes it (no
 * Expect), and headers with Expect: 100-continue, waiting for 100 Continue or the answer before any body.
 */
export async function measureConflicts(options: ConflictOptions): Promise<ConflictRun[]> {
  // Warm-up: the first refusals load and compile code paths (error handling) the uploads did not take.
  for (let i = 0; i < 2; i++) await conflictRequest(options, "control", 0);
  const runs: ConflictRun[] = [];
  for (let round = 1; round <= options.rounds; round++) {
    const parts: string[] = [];
    for (const kind of ["control", "no-expect", "expect"] as const) {
      const run = await conflictRequest(options, kind, round);
      runs.push(run);
      const read = run.serverRead === undefined ? "?" : `+${run.serverRead - run.headBytes}`;
      parts.push(
        `${kind} ${run.status ?? `no answer (${run.error ?? "closed"})`}, server read head${read} B` +
          (kind === "control" ? "" : `, client sent ${run.bodySent} B`),
      );
    }
    options.log(`409 round ${round}/${options.rounds}: ${parts.join("; ")}`);
  }
  // A 409 is what is measured; anything else (401, 404, a 100 Continue) makes the numbers meaningless. Only
  // the body-sending request may see no answer at all (see ConflictRun.error).
  const wrong = runs.filter(
    (r) => r.continued || (r.status === undefined ? r.kind !== "no-expect" : r.status !== 409),
  );
  if (wrong.length > 0) {
    const what = wrong.map(
      (r) => `${r.kind}: ${r.continued ? "100 Continue, then " : ""}${r.status ?? r.error}`,
    );
    throw new Error(`expected 409 app_version_exists for every request, got ${what.join(", ")}`);
  }
  const controls = runs.filter((r) => r.kind === "control" && r.serverRead !== undefined);
  const otherReads = Math.max(0, median(controls.map((r) => (r.serverRead as number) - r.headBytes)));
  for (const run of runs) {
    run.otherReads = Number.isFinite(otherReads) ? otherReads : undefined;
    const body = (read: number | undefined) =>
      read === undefined || run.otherReads === undefined ? undefined : read - run.headBytes - run.otherReads;
    run.serverBodyBytes = body(run.serverRead);
    run.serverBodyBytesBeforeAnswer = body(run.serverReadBeforeAnswer);
  }
  return runs;
}

/** The final (non-1xx) response in what was received: its status, and whether its body is complete. */
function finalResponse(received: string): { status: number; complete: boolean } | undefined {
  let rest = received;
  while (/^HTTP\/1\.[01] 1\d\d /.test(rest)) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) return undefined;
    rest = rest.slice(end + 4);
  }
  const end = rest.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const head = rest.slice(0, end);
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1]);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(head)?.[1] ?? 0);
  return { status, complete: rest.length - end - 4 >= length };
}

async function conflictRequest(o: ConflictOptions, kind: ConflictKind, round: number): Promise<ConflictRun> {
  const head =
    `PUT /v1/apps/${o.packageName}/versions/${o.version} HTTP/1.1\r\nHost: 127.0.0.1:${o.port}\r\n` +
    `x-api-key: ${o.token}\r\nContent-Type: application/octet-stream\r\nContent-Length: ${o.declared}\r\n` +
    (kind === "expect" ? "Expect: 100-continue\r\n" : "") +
    "\r\n";
  const socket = net.connect({ port: o.port, host: "127.0.0.1" });
  let received = "";
  let closed = false;
  let flushed = 0;
  let sentBeforeResponse: number | undefined;
  let answeredAt: number | undefined;
  let before: number | undefined;
  let readAtAnswer: number | undefined;
  let waiters: Array<() => void> = [];
  const notify = () => {
    const woken = waiters;
    waiters = [];
    for (const wake of woken) wake();
  };
  /** Resolves when `condition` holds or `ms` have passed; says whether it holds. */
  const until = async (condition: () => boolean, ms: number): Promise<boolean> => {
    const deadline = performance.now() + ms;
    while (!condition()) {
      const left = deadline - performance.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
    return true;
  };
  socket.setEncoding("latin1");
  socket.on("data", (chunk: string) => {
    received += chunk;
    if (answeredAt === undefined && finalResponse(received)) {
      answeredAt = performance.now();
      sentBeforeResponse = flushed;
      readAtAnswer = bytesRead(o.pid);
    }
    notify();
  });
  socket.on("drain", notify);
  socket.on("close", () => {
    closed = true;
    notify();
  });
  // A reset (the server closes with body bytes unread) shows up as the close that follows.
  let error: string | undefined;
  socket.on("error", (e: NodeJS.ErrnoException) => {
    error ??= e.code ?? e.message;
  });
  try {
    const connected = await new Promise<boolean>((resolve) => {
      const timer = setTimeout(() => resolve(false), 5000);
      socket.once("connect", () => {
        clearTimeout(timer);
        resolve(true);
      });
      socket.once("close", () => {
        clearTimeout(timer);
        resolve(false);
      });
    });
    if (!connected) throw new Error(`could not connect to 127.0.0.1:${o.port}`);

    before = bytesRead(o.pid);
    const started = performance.now();
    socket.write(head, "latin1");
    const answered = () => finalResponse(received) !== undefined;
    let sendBody = kind === "no-expect";
    if (kind === "expect") {
      // Wait for 100 Continue or a final answer, at most 5 s, before sending anything.
      await until(() => received.includes("\r\n\r\n") || closed, 5000);
      sendBody = !answered() && !closed && /^HTTP\/1\.1 100/.test(received);
    }
    if (sendBody) {
      const deadline = performance.now() + 10_000;
      const source = createReadStream(o.file, { highWaterMark: o.chunkBytes });
      try {
        for await (const chunk of source as AsyncIterable<Buffer>) {
          if (answered() || closed || performance.now() > deadline) break;
          const accepted = socket.write(chunk, (failed) => {
            if (!failed) flushed += chunk.length;
            notify();
          });
          if (!accepted) {
            await until(
              () => !socket.writableNeedDrain || answered() || closed,
              deadline - performance.now(),
            );
          }
        }
      } finally {
        source.destroy();
      }
    }
    await until(() => finalResponse(received)?.complete === true || closed, 5000);
    const closedByServer = await until(() => closed, 5000);
    socket.destroy();
    // Let the server finish with the connection before its reads are counted.
    await sleep(50);
    const after = bytesRead(o.pid);
    return {
      kind,
      round,
      status: finalResponse(received)?.status,
      continued: /^HTTP\/1\.1 100/.test(received),
      headBytes: Buffer.byteLength(head, "latin1"),
      bodySentBeforeResponse: sentBeforeResponse ?? flushed,
      bodySent: flushed,
      serverRead: before === undefined || after === undefined ? undefined : after - before,
      otherReads: undefined,
      serverBodyBytes: undefined,
      serverBodyBytesBeforeAnswer: undefined,
      serverReadBeforeAnswer:
        before === undefined || readAtAnswer === undefined ? undefined : readAtAnswer - before,
      responseMs: answeredAt === undefined ? undefined : answeredAt - started,
      closedByServer,
      error,
    };
  } finally {
    socket.destroy();
  }
}
