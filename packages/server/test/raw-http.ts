import net from "node:net";

/**
 * One HTTP/1.1 connection driven by hand: for what fetch() will not do (partial bodies, Expect:
 * 100-continue, broken headers) and for counting how many body bytes a client got to send.
 */
export class RawConnection {
  private received = "";
  private closed = false;
  private waiters: Array<() => void> = [];
  readonly socket: net.Socket;
  /** Body bytes written with sendBody(). */
  bodyBytesSent = 0;

  private constructor(socket: net.Socket) {
    this.socket = socket;
    socket.setEncoding("latin1");
    socket.on("data", (chunk: string) => {
      this.received += chunk;
      this.wake();
    });
    socket.on("close", () => {
      this.closed = true;
      this.wake();
    });
    socket.on("error", () => {
      // a reset shows up as the close that follows it
    });
  }

  static open(origin: string): Promise<RawConnection> {
    const url = new URL(origin);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(url.port), url.hostname, () => resolve(new RawConnection(socket)));
      socket.once("error", reject);
    });
  }

  private wake() {
    for (const waiter of this.waiters.splice(0)) waiter();
  }

  send(text: string): void {
    this.socket.write(text, "latin1");
  }

  sendBody(bytes: Buffer): Promise<void> {
    this.bodyBytesSent += bytes.length;
    return new Promise((resolve) => {
      if (this.socket.write(bytes)) resolve();
      else this.socket.once("drain", resolve);
    });
  }

  /** Everything received so far. */
  get text(): string {
    return this.received;
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Waits until `condition` holds on what was received (or the connection closed), at most `ms`. */
  async waitFor(condition: (received: string, closed: boolean) => boolean, ms = 10_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!condition(this.received, this.closed)) {
      if (this.closed) throw new Error(`connection closed; received: ${this.received.slice(0, 300)}`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error(`timed out; received: ${this.received.slice(0, 300)}`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, left);
        this.waiters.push(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Waits for a complete final (non-1xx) response with a Content-Length body and parses it. */
  // biome-ignore lint/suspicious/noExplicitAny: tests assert on response bodies field by field
  async finalResponse(ms = 10_000): Promise<{ status: number; headers: string; body: string; json: any }> {
    let parsed: { status: number; headers: string; body: string } | undefined;
    await this.waitFor((received) => {
      parsed = parseFinal(received);
      return parsed !== undefined;
    }, ms);
    if (!parsed) throw new Error("no response");
    let json: unknown;
    try {
      json = JSON.parse(parsed.body);
    } catch {
      json = undefined;
    }
    return { ...parsed, json };
  }

  /** Resolves when the server has closed the connection, at most `ms`. */
  async closedByServer(ms = 5_000): Promise<boolean> {
    try {
      await this.waitFor((_received, closed) => closed, ms);
    } catch (error) {
      if (this.closed) return true;
      if (String(error).includes("timed out")) return false;
      throw error;
    }
    return true;
  }

  destroy(): void {
    this.socket.destroy();
  }
}

function parseFinal(received: string) {
  let rest = received;
  // Skip interim responses (100 Continue).
  while (/^HTTP\/1\.1 1\d\d /.test(rest)) {
    const end = rest.indexOf("\r\n\r\n");
    if (end < 0) return undefined;
    rest = rest.slice(end + 4);
  }
  const end = rest.indexOf("\r\n\r\n");
  if (end < 0) return undefined;
  const headers = rest.slice(0, end);
  const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(headers)?.[1]);
  const length = Number(/\r\ncontent-length: *(\d+)/i.exec(headers)?.[1] ?? 0);
  const body = rest.slice(end + 4);
  if (Buffer.byteLength(body, "latin1") < length) return undefined;
  return { status, headers, body: Buffer.from(body.slice(0, length), "latin1").toString("utf8") };
}
