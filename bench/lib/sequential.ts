// Latency of one request at a time over one keep-alive connection: what a single CI job calling the API
// sees, as opposed to the throughput under load that lib/load.ts measures.
import http from "node:http";
import { processCpuSeconds } from "./cpu.ts";
import { percentile } from "./stats.ts";

export interface TimedResponse {
  status: number;
  body: Buffer;
  /** From just before the request is written to the last byte of the response. */
  ms: number;
}

export interface SequentialRequest {
  method?: "GET" | "POST";
  path: string;
  headers?: Record<string, string>;
  /** JSON-encoded by the caller, sent with content-type application/json. */
  body?: string;
}

/** One keep-alive connection to a server on 127.0.0.1; every request waits for the one before. */
export class SequentialClient {
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  private readonly host: string;
  private readonly port: number;

  constructor(
    origin: string,
    private readonly headers: Record<string, string> = {},
    private readonly timeoutMs = 30_000,
  ) {
    const url = new URL(origin);
    if (url.hostname !== "127.0.0.1")
      throw new Error(`benchmarks target 127.0.0.1 only, not ${url.hostname}`);
    this.host = url.hostname;
    this.port = Number(url.port);
  }

  send(request: SequentialRequest): Promise<TimedResponse> {
    const headers: Record<string, string> = { ...this.headers, ...request.headers };
    const body = request.body === undefined ? undefined : Buffer.from(request.body);
    if (body) {
      headers["content-type"] = "application/json";
      headers["content-length"] = String(body.length);
    }
    return new Promise((resolve, reject) => {
      const started = performance.now();
      const outgoing = http.request(
        {
          host: this.host,
          port: this.port,
          agent: this.agent,
          method: request.method ?? (body ? "POST" : "GET"),
          path: request.path,
          headers,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("error", reject);
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 0,
              body: Buffer.concat(chunks),
              ms: performance.now() - started,
            }),
          );
        },
      );
      outgoing.setTimeout(this.timeoutMs, () =>
        outgoing.destroy(new Error(`${request.path}: no response after ${this.timeoutMs / 1000} s`)),
      );
      outgoing.on("error", reject);
      outgoing.end(body);
    });
  }

  close(): void {
    this.agent.destroy();
  }
}

export interface SeriesOptions {
  /** Requests to time, at most. */
  count: number;
  /** Stop early once this much time has passed (the series then has fewer than `count` times). */
  maxSeconds: number;
  /** Anything else fails the series: a benchmark of error responses measures the wrong thing. */
  expectStatus?: number;
  /** The server process, to report the share of one core it used during the series. */
  serverPid?: number;
}

export interface Series {
  /** Every request's time in ms, in the order sent. */
  times: number[];
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
  /** Size of the last response body. */
  bodyBytes: number;
  seconds: number;
  /** True when `maxSeconds` cut the series short. */
  cutShort: boolean;
  /** CPU the server used during the series, in % of one core. */
  serverCpuPercent: number | undefined;
}

/** Percentiles of ms values (nearest rank), in any order. */
export function summarize(times: readonly number[]): {
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  maxMs: number;
} {
  const sorted = Float64Array.from(times).sort();
  return {
    p50Ms: percentile(sorted, 50),
    p99Ms: percentile(sorted, 99),
    meanMs: times.reduce((sum, t) => sum + t, 0) / Math.max(1, times.length),
    maxMs: sorted.length > 0 ? (sorted[sorted.length - 1] as number) : Number.NaN,
  };
}

/** Sends `request()` `count` times one after the other (bounded by `maxSeconds` too) and times each. */
export async function timeSeries(
  label: string,
  client: SequentialClient,
  request: () => SequentialRequest,
  options: SeriesOptions,
): Promise<Series> {
  const expect = options.expectStatus ?? 200;
  const times: number[] = [];
  const cpuBefore = options.serverPid === undefined ? undefined : processCpuSeconds(options.serverPid);
  const started = performance.now();
  const deadline = started + options.maxSeconds * 1000;
  let bodyBytes = 0;
  let cutShort = false;
  for (let i = 0; i < options.count; i++) {
    if (performance.now() > deadline) {
      cutShort = true;
      break;
    }
    const response = await client.send(request());
    if (response.status !== expect) {
      throw new Error(
        `${label}: answered ${response.status}, not ${expect}: ${response.body.toString("utf8").slice(0, 500)}`,
      );
    }
    times.push(response.ms);
    bodyBytes = response.body.length;
  }
  const seconds = (performance.now() - started) / 1000;
  const cpuAfter = options.serverPid === undefined ? undefined : processCpuSeconds(options.serverPid);
  return {
    times,
    ...summarize(times),
    bodyBytes,
    seconds,
    cutShort,
    serverCpuPercent:
      cpuBefore === undefined || cpuAfter === undefined
        ? undefined
        : ((cpuAfter - cpuBefore) / seconds) * 100,
  };
}
