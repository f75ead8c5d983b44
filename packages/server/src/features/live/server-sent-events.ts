import { PassThrough } from "node:stream";

/**
 * A text/event-stream body (the WHATWG HTML "server-sent events" format): named events with JSON data, and
 * comments that keep proxies from closing a connection that is quiet for a while.
 */
export class EventStream {
  readonly body = new PassThrough();
  private readonly keepAlive: NodeJS.Timeout;

  constructor(options: { retryMs: number; keepAliveMs: number }) {
    // How long a browser's EventSource waits before it connects again after losing the stream.
    this.body.write(`retry: ${options.retryMs}\n\n`);
    this.keepAlive = setInterval(() => this.body.write(": keep-alive\n\n"), options.keepAliveMs);
    this.keepAlive.unref();
  }

  send(event: string, data: object): void {
    if (this.body.writableEnded) return;
    this.body.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
  }

  end(): void {
    clearInterval(this.keepAlive);
    if (!this.body.writableEnded) this.body.end();
  }
}
