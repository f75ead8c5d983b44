/**
 * A webhook receiver for tests: a real HTTP server on 127.0.0.1 that keeps every request, checks Standard
 * Webhooks signatures with the `standardwebhooks` library as receivers do, and answers as it is told.
 */
import { once } from "node:events";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { Webhook } from "standardwebhooks";

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** Parsed after the signature was verified with the secret the test gave; undefined when none was given. */
  verified: unknown;
  /** Why verification failed, when it did. */
  verifyError: string | undefined;
}

/** How to answer one request: a status (and body), or "hang" to never answer. */
export type Answer = { status: number; body?: string; headers?: Record<string, string> } | "hang";

export class TestReceiver {
  readonly received: ReceivedRequest[] = [];
  /** Answers for the next requests, in order; after them, 200. */
  readonly answers: Answer[] = [];
  secret: string | undefined;
  private waiters: Array<{ count: number; resolve: () => void }> = [];
  private readonly hanging: ServerResponse[] = [];

  private constructor(
    private readonly server: Server,
    readonly url: string,
  ) {}

  static async start(): Promise<TestReceiver> {
    let receiver: TestReceiver | undefined;
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on("data", (chunk: Buffer) => chunks.push(chunk));
      request.on("end", () =>
        receiver?.take(request.url ?? "/", request.headers, Buffer.concat(chunks).toString(), response),
      );
    });
    server.listen(0, "127.0.0.1");
    await once(server, "listening");
    const { port } = server.address() as AddressInfo;
    receiver = new TestReceiver(server, `http://127.0.0.1:${port}/hook`);
    return receiver;
  }

  /** Resolves once `count` requests have arrived in all (the deadline makes a missing one a failure, not a hang). */
  requests(count: number, timeoutMs = 30_000): Promise<ReceivedRequest[]> {
    if (this.received.length >= count) return Promise.resolve(this.received.slice(0, count));
    return new Promise((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new Error(`the receiver got ${this.received.length} of ${count} requests`)),
        timeoutMs,
      );
      this.waiters.push({
        count,
        resolve: () => {
          clearTimeout(timer);
          resolve(this.received.slice(0, count));
        },
      });
    });
  }

  async close(): Promise<void> {
    for (const response of this.hanging) response.destroy();
    this.server.closeAllConnections();
    this.server.close();
  }

  private take(path: string, headers: IncomingHttpHeaders, body: string, response: ServerResponse) {
    let verified: unknown;
    let verifyError: string | undefined;
    if (this.secret !== undefined) {
      try {
        verified = new Webhook(this.secret).verify(body, headers as Record<string, string>);
      } catch (error) {
        verifyError = (error as Error).message;
      }
    }
    this.received.push({ path, headers, body, verified, verifyError });
    const answer = this.answers.shift() ?? { status: 200, body: "thanks" };
    if (answer === "hang") this.hanging.push(response);
    else response.writeHead(answer.status, answer.headers).end(answer.body ?? "");
    const ready = this.waiters.filter((w) => this.received.length >= w.count);
    this.waiters = this.waiters.filter((w) => this.received.length < w.count);
    for (const waiter of ready) waiter.resolve();
  }
}
