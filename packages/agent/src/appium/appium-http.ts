/**
 * The agent's requests to its Appium servers, on node:http with kept-alive connections: a relayed command's
 * added latency is a contract (API.md §12, at most 1 ms at the median), and a new TCP connection per command, or
 * fetch's heavier machinery, would spend much of it.
 */
import { Agent, request } from "node:http";

export interface AppiumAnswer {
  status: number;
  /** The parsed JSON body; the text itself when Appium answered something else (relayed as it is). */
  body: unknown;
}

/** Loopback connections kept open between one session's commands (one at a time per session, so few). */
const keepAlive = new Agent({ keepAlive: true, maxFreeSockets: 64 });

/** Sends one request to the Appium server on 127.0.0.1:port; rejects only when Appium cannot be reached. */
export function appiumRequest(
  port: number,
  method: string,
  path: string,
  body?: unknown,
  timeoutMs = 0,
): Promise<AppiumAnswer> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request(
      {
        host: "127.0.0.1",
        port,
        method,
        path,
        agent: keepAlive,
        headers: payload
          ? { "content-type": "application/json; charset=utf-8", "content-length": payload.length }
          : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("error", reject);
        res.on("end", () => {
          const text = Buffer.concat(chunks).toString("utf8");
          let parsed: unknown = text;
          try {
            parsed = text === "" ? null : JSON.parse(text);
          } catch {
            // Not JSON: passed on as text.
          }
          resolve({ status: res.statusCode ?? 500, body: parsed });
        });
      },
    );
    // 0: no limit; a WebDriver command may legitimately take minutes (an implicit wait, a long gesture).
    if (timeoutMs > 0)
      req.setTimeout(timeoutMs, () => req.destroy(new Error(`no answer within ${timeoutMs} ms`)));
    req.on("error", reject);
    req.end(payload);
  });
}
