import http from "node:http";
import type { Caller, FuzzRequest } from "./fuzz-requests.ts";

export interface FuzzOutcome {
  request: FuzzRequest;
  /** The status, or the client-side error when no response came. */
  status?: number;
  contentType?: string;
  body?: string;
  error?: string;
}

/** Longer than any answer should take: a request still open after this counts as a stall. */
const stallMs = 20_000;
/**
 * Sign-ins and password changes may wait up to 30 s on purpose after repeated failures for one account
 * (features/people/login-limits.ts: maxDelaySeconds), which the fuzzer's many wrong passwords for its one known
 * email reach: a stall there is one that outlasts that wait.
 */
const signInStallMs = 30_000 + stallMs;

let sent = 0;
/** An address of RFC 2544's benchmarking range (198.18.0.0/15) per request, cycling after 65,536: never routed. */
function forwardedFor(): string {
  const n = sent++ % 65_536;
  return `198.18.${n >> 8}.${n & 255}`;
}

/** Sends one request over plain node:http (fetch would refuse some of the odd headers on purpose). */
function send(
  origin: URL,
  agent: http.Agent,
  request: FuzzRequest,
  tokens: Record<Caller, string | undefined>,
): Promise<FuzzOutcome> {
  return new Promise((resolve) => {
    const headers: Record<string, string> = { ...request.headers };
    const token = tokens[request.caller];
    if (token) headers["x-api-key"] ??= token;
    // Each request from an address of its own (the test's server trusts 127.0.0.1 as its proxy): the sign-in
    // slowdown counts failures per address, as the rate limits (raised for the fuzzer) count requests, and is
    // tested on its own (features/people); thousands of failed sign-ins from one address would wait it out.
    headers["x-forwarded-for"] ??= forwardedFor();
    if (request.body) headers["content-length"] = String(request.body.length);
    let outgoing: http.ClientRequest;
    const timeout = request.url.startsWith("/auth/") ? signInStallMs : stallMs;
    try {
      outgoing = http.request({
        host: origin.hostname,
        port: origin.port,
        method: request.method,
        path: request.url,
        headers,
        agent,
        timeout,
      });
    } catch (error) {
      // Node refused to send it (an invalid header character): nothing reached the server.
      resolve({ request, error: `not sent: ${String(error)}` });
      return;
    }
    outgoing.on("response", (response) => {
      const contentType = String(response.headers["content-type"] ?? "");
      // GET /v1/events answers a stream that stays open by design: its first bytes are the answer.
      if (response.statusCode === 200 && contentType.startsWith("text/event-stream")) {
        response.once("data", (chunk: Buffer) => {
          resolve({ request, status: 200, contentType, body: chunk.toString("utf8") });
          outgoing.destroy();
        });
        return;
      }
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on("data", (chunk: Buffer) => {
        // Keep the start of the body only: a download may be large, and only an error body is read.
        if (kept < 64 * 1024) chunks.push(chunk);
        kept += chunk.length;
      });
      response.on("end", () =>
        resolve({
          request,
          status: response.statusCode ?? 0,
          contentType: String(response.headers["content-type"] ?? ""),
          body: Buffer.concat(chunks).toString("utf8"),
        }),
      );
      response.on("error", (error) =>
        resolve({ request, status: response.statusCode, error: String(error) }),
      );
    });
    outgoing.on("timeout", () => {
      outgoing.destroy(new Error(`no answer within ${timeout} ms`));
    });
    outgoing.on("error", (error) => resolve({ request, error: String(error) }));
    outgoing.end(request.body);
  });
}

/** Sends `requests` with `concurrency` at a time, in order of start, and returns every outcome. */
export async function sendAll(
  origin: string,
  requests: readonly FuzzRequest[],
  tokens: Record<Caller, string | undefined>,
  concurrency = 8,
): Promise<FuzzOutcome[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });
  const base = new URL(origin);
  const outcomes: FuzzOutcome[] = new Array(requests.length);
  let next = 0;
  const worker = async () => {
    while (next < requests.length) {
      const index = next++;
      const request = requests[index];
      if (request) outcomes[index] = await send(base, agent, request, tokens);
    }
  };
  try {
    await Promise.all(Array.from({ length: concurrency }, worker));
  } finally {
    agent.destroy();
  }
  return outcomes;
}
