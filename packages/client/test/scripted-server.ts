import { createHash } from "node:crypto";
import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import type { AddressInfo } from "node:net";

/** One scripted answer: a status with JSON body and headers, or a dropped connection. */
export type Step = { status: number; body?: unknown; headers?: Record<string, string> } | { drop: true };

export interface Received {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  bodyBytes: number;
  bodySha256: string;
  body: string;
}

export const problem = (
  status: number,
  code: string,
  extra: Record<string, unknown> = {},
  headers: Record<string, string> = {},
): Step => ({
  status,
  headers: { "content-type": "application/problem+json", ...headers },
  body: {
    status,
    code,
    title: code,
    detail: `${code}: detail`,
    fix: `${code}: fix`,
    retryable: status === 429,
    request_id: "req-1",
    ...extra,
  },
});

/**
 * A small HTTP server on 127.0.0.1 that answers each "METHOD /path" (below /v1) from a script, one step per
 * request and the last step again once the script runs out; unscripted paths are 404 route_not_found. The
 * token endpoint answers a token unless scripted. Every request is recorded, body hash included.
 */
export class ScriptedServer {
  readonly received: Received[] = [];
  private readonly scripts = new Map<string, Step[]>();
  private server: Server | undefined;
  baseUrl = "";

  script(key: string, ...steps: Step[]): this {
    this.scripts.set(key, steps);
    return this;
  }

  count(key: string): number {
    return this.received.filter((r) => `${r.method} ${r.path}` === key).length;
  }

  requests(key: string): Received[] {
    return this.received.filter((r) => `${r.method} ${r.path}` === key);
  }

  async start(): Promise<string> {
    this.server = createServer((request, response) => {
      const url = new URL(request.url ?? "/", "http://localhost");
      const hash = createHash("sha256");
      const chunks: Buffer[] = [];
      let bytes = 0;
      request.on("data", (chunk: Buffer) => {
        bytes += chunk.length;
        hash.update(chunk);
        if (bytes < 1_000_000) chunks.push(chunk);
      });
      request.on("end", () => {
        const path = url.pathname.replace(/^\/v1/, "");
        const method = request.method ?? "GET";
        this.received.push({
          method,
          path,
          query: url.searchParams,
          headers: request.headers,
          bodyBytes: bytes,
          bodySha256: hash.digest("hex"),
          body: Buffer.concat(chunks).toString(),
        });
        const key = `${method} ${path}`;
        const steps = this.scripts.get(key);
        let step: Step | undefined = steps && (steps.length > 1 ? steps.shift() : steps[0]);
        if (!step && key === "POST /oauth/token") {
          step = {
            status: 200,
            body: {
              access_token: "scripted-token",
              token_type: "api-key",
              expires_in: 86_400,
              expires_at: "2026-01-02T00:00:00.000Z",
            },
          };
        }
        step ??= problem(404, "route_not_found");
        if ("drop" in step) {
          request.socket.destroy();
          return;
        }
        const body = step.body === undefined || method === "HEAD" ? "" : JSON.stringify(step.body);
        response.writeHead(step.status, { "content-type": "application/json", ...step.headers });
        response.end(body);
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, "127.0.0.1", resolve));
    const { port } = this.server.address() as AddressInfo;
    this.baseUrl = `http://127.0.0.1:${port}/v1`;
    return this.baseUrl;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => this.server?.close(() => resolve()));
  }
}

/** A CLI run's output, captured. */
export class Captured {
  text = "";
  isTTY = false;
  write(chunk: string): boolean {
    this.text += chunk;
    return true;
  }
}
