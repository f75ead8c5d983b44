// Load for `npm run bench -- ratelimit`: a client that hammers (saturation, bounded by time and count), and
// one request at a time (latency). Keep-alive node:http, 127.0.0.1 only.
import http from "node:http";

export interface Endpoint {
  url: string;
  headers: Record<string, string>;
}

function checkLoopback(endpoints: Endpoint[]): void {
  for (const { url } of endpoints) {
    const { hostname } = new URL(url);
    if (hostname !== "127.0.0.1") throw new Error(`benchmarks target 127.0.0.1 only, not ${hostname}`);
  }
}

function get(agent: http.Agent, endpoint: Endpoint): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = http.get(endpoint.url, { agent, headers: endpoint.headers }, (response) => {
      response.resume();
      response.on("end", () => resolve(response.statusCode ?? 0));
      response.on("error", reject);
    });
    request.on("error", reject);
  });
}

export interface Saturation {
  /** performance.now() when the first request was sent. */
  startedAt: number;
  durationMs: number;
  /** Requests sent and answered, in all. */
  sent: number;
  /** Answers by status code. */
  statusCodes: Record<string, number>;
  /** When each admitted (2xx) request was sent, ascending (performance.now() ms). */
  admittedAt: number[];
  /** Which endpoint each admitted request went to. */
  admittedBy: number[];
  /** Stopped by the request cap before the time was up. */
  capped: boolean;
}

/**
 * `concurrency` requests in flight at all times until `durationMs` has passed or `maxRequests` were sent; request
 * n goes to endpoint n mod endpoints.length, so several instances take turns.
 */
export async function saturate(options: {
  endpoints: Endpoint[];
  concurrency: number;
  durationMs: number;
  maxRequests: number;
}): Promise<Saturation> {
  checkLoopback(options.endpoints);
  const agent = new http.Agent({ keepAlive: true, maxSockets: options.concurrency });
  const statusCodes: Record<string, number> = {};
  const admitted: { at: number; by: number }[] = [];
  let next = 0;
  let sent = 0;
  const startedAt = performance.now();
  const deadline = startedAt + options.durationMs;
  const worker = async () => {
    while (performance.now() < deadline && next < options.maxRequests) {
      const by = next++ % options.endpoints.length;
      const at = performance.now();
      const status = await get(agent, options.endpoints[by] as Endpoint);
      sent++;
      statusCodes[status] = (statusCodes[status] ?? 0) + 1;
      if (status >= 200 && status < 300) admitted.push({ at, by });
    }
  };
  try {
    await Promise.all(Array.from({ length: options.concurrency }, worker));
  } finally {
    agent.destroy();
  }
  admitted.sort((a, b) => a.at - b.at);
  return {
    startedAt,
    durationMs: performance.now() - startedAt,
    sent,
    statusCodes,
    admittedAt: admitted.map((a) => a.at),
    admittedBy: admitted.map((a) => a.by),
    capped: next >= options.maxRequests,
  };
}

/** Milliseconds per request, one request at a time over one keep-alive connection; every answer must be 2xx. */
export async function sequentialLatencies(endpoint: Endpoint, count: number): Promise<number[]> {
  checkLoopback([endpoint]);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const times: number[] = [];
  try {
    for (let i = 0; i < count; i++) {
      const start = performance.now();
      const status = await get(agent, endpoint);
      times.push(performance.now() - start);
      if (status < 200 || status >= 300) throw new Error(`GET ${endpoint.url} answered ${status}`);
    }
  } finally {
    agent.destroy();
  }
  return times;
}
