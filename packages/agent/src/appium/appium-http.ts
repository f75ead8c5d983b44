/**
 * The agent's requests to its Appium servers, on undici's kept-alive connection pools (the HTTP client the server
 * uses too: channel/relay-forwarder.ts). A relayed command's added latency is a contract (API.md §12, at most 1 ms
 * at the median); alone, a loopback round trip on undici's `request` took 0.124–0.145 ms here against 0.189–0.229
 * on node:http's kept-alive Agent and about 0.65 on fetch (bench/HISTORY.md "appium", 2026-11-29). Within the
 * whole relay the difference was below the benchmark's run-to-run noise.
 */
import { Agent, type Dispatcher } from "undici";

export interface AppiumAnswer {
  status: number;
  /** The parsed JSON body; the text itself when Appium answered something else (relayed as it is). */
  body: unknown;
}

/**
 * Loopback connections kept between one session's commands (one at a time per session, so few). No header or
 * body timeout of undici's own (300 s each by default): a WebDriver command may legitimately take minutes (an
 * implicit wait, a long gesture); callers that want a limit pass one.
 */
const appiumConnections = new Agent({ headersTimeout: 0, bodyTimeout: 0, keepAliveTimeout: 30_000 });

/** Sends one request to the Appium server on 127.0.0.1:port; rejects only when Appium cannot be reached. */
export async function appiumRequest(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 0,
): Promise<AppiumAnswer> {
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const response = await appiumConnections
    .request({
      origin: `http://127.0.0.1:${port}`,
      path,
      method: method as Dispatcher.HttpMethod,
      ...(payload === undefined
        ? {}
        : { body: payload, headers: { "content-type": "application/json; charset=utf-8" } }),
      // 0: no limit (see appiumConnections).
      ...(timeoutMs > 0 ? { signal: AbortSignal.timeout(timeoutMs) } : {}),
    })
    .catch((error: unknown) => {
      throw timeoutMs > 0 && isTimeout(error) ? new Error(`no answer within ${timeoutMs} ms`) : error;
    });
  const text = await response.body.text();
  let parsed: unknown = text;
  try {
    parsed = text === "" ? null : JSON.parse(text);
  } catch {
    // Not JSON: passed on as text.
  }
  return { status: response.statusCode, body: parsed };
}

function isTimeout(error: unknown): boolean {
  return error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError");
}
