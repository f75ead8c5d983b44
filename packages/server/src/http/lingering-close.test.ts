import http from "node:http";
import net from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { sendRefusedUpload } from "./lingering-close.fixture.ts";
import { type LingerLimits, type LingerOutcome, lingerAfterAnswer } from "./lingering-close.ts";

/**
 * A bare node:http server that refuses every request from its headers with a 409 (Connection: close), the
 * way the upload routes do, with lingering close in between; what each connection's socket read is kept.
 */
async function refusingServer(limits: Partial<LingerLimits>) {
  const outcomes: Array<LingerOutcome & { socketBytesRead: number }> = [];
  const requests: string[] = [];
  let closedWaiters: Array<() => void> = [];
  const server = http.createServer((request, response) => {
    requests.push(`${request.method} ${request.url}`);
    const socket = request.socket;
    lingerAfterAnswer(request, response, {
      limits,
      onClosed: (outcome) => {
        outcomes.push({ ...outcome, socketBytesRead: socket.bytesRead });
        for (const wake of closedWaiters.splice(0)) wake();
      },
    });
    const body = JSON.stringify({ code: "app_version_exists" });
    response.writeHead(409, {
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
      connection: "close",
    });
    response.end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as net.AddressInfo;
  servers.push(server);
  return {
    origin: `http://127.0.0.1:${port}`,
    outcomes,
    requests,
    /** The next connection's outcome (lingering ends after the client saw the close, or before). */
    async outcome(index: number) {
      while (outcomes.length <= index) await new Promise<void>((resolve) => closedWaiters.push(resolve));
      return outcomes[index] as LingerOutcome & { socketBytesRead: number };
    },
    reset() {
      closedWaiters = [];
    },
  };
}

const servers: http.Server[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

const MiB = 1024 * 1024;
const putHead = (length: number, extra = "") =>
  `PUT /upload HTTP/1.1\r\nhost: x\r\ncontent-length: ${length}\r\n${extra}\r\n`;

describe("lingering close after an early refusal", () => {
  it("lets a client sending 50 MiB at full speed read the refusal, every time", async () => {
    const server = await refusingServer({ maxMs: 1_000, maxBytes: MiB, idleMs: 500 });
    for (let i = 0; i < 10; i++) {
      const result = await sendRefusedUpload(server.origin, putHead(50 * MiB), 50 * MiB, {
        stopOnAnswer: true,
      });
      expect(result.status, `try ${i + 1}: ${result.error}`).toBe(409);
      expect(result.json).toEqual({ code: "app_version_exists" });
      expect(result.endedByServer).toBe(true);
      const outcome = await server.outcome(i);
      expect(outcome.readBeforeAnswer + outcome.discardedBytes).toBeLessThanOrEqual(MiB);
      // Everything the socket took from the kernel, the head and a read the pause left unused included.
      expect(outcome.socketBytesRead).toBeLessThanOrEqual(MiB + putHead(50 * MiB).length);
    }
  });

  it("reads at most maxBytes of a body the client keeps sending, then closes at maxMs", async () => {
    const server = await refusingServer({ maxMs: 1_000, maxBytes: 256 * 1024, idleMs: 500 });
    const result = await sendRefusedUpload(server.origin, putHead(50 * MiB), 50 * MiB, {
      stopOnAnswer: false,
    });
    expect(result.status).toBe(409);
    expect(result.closedByServer).toBe(true);
    // Not all of the body went: the server closed while the client was still sending.
    expect(result.bodySent).toBeLessThan(50 * MiB);
    const outcome = await server.outcome(0);
    expect(outcome).toMatchObject({ reason: "time", byteBoundHit: true });
    expect(outcome.readBeforeAnswer + outcome.discardedBytes).toBeLessThanOrEqual(256 * 1024);
    expect(outcome.socketBytesRead).toBeLessThanOrEqual(256 * 1024 + putHead(50 * MiB).length);
  });

  it("cuts a client trickling its body (never idle) at maxMs", async () => {
    const server = await refusingServer({ maxMs: 600, maxBytes: MiB, idleMs: 300 });
    const socket = net.connect({ port: Number(new URL(server.origin).port), host: "127.0.0.1" });
    socket.on("error", () => {});
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(putHead(1_000_000));
    const closed = new Promise((resolve) => socket.once("close", resolve));
    let sent = 0;
    const trickle = setInterval(() => {
      if (!socket.writable) return;
      socket.write("x");
      sent++;
    }, 50);
    try {
      await closed;
    } finally {
      clearInterval(trickle);
    }
    const outcome = await server.outcome(0);
    expect(outcome.reason).toBe("time");
    expect(outcome.byteBoundHit).toBe(false);
    // The trickle went on after the answer: the idle bound never ended it, only the deadline did.
    expect(outcome.discardedBytes).toBeGreaterThan(0);
    expect(outcome.discardedBytes).toBeLessThanOrEqual(sent);
  });

  it("closes as soon as the client stops sending, and serves no request pipelined after the body", async () => {
    const server = await refusingServer({ maxMs: 5_000, maxBytes: MiB, idleMs: 200 });
    const body = "0123456789";
    const socket = net.connect({
      port: Number(new URL(server.origin).port),
      host: "127.0.0.1",
      allowHalfOpen: true,
    });
    socket.on("error", () => {});
    let received = "";
    socket.on("data", (data) => {
      received += data.toString("latin1");
    });
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(putHead(body.length));
    await new Promise<void>((resolve) => {
      const check = () => (received.includes("\r\n\r\n") ? resolve() : socket.once("data", check));
      check();
    });
    socket.write(`${body}GET /second HTTP/1.1\r\nhost: x\r\n\r\n`);
    const outcome = await server.outcome(0);
    socket.destroy();
    expect(outcome.reason).toBe("idle");
    expect(outcome.discardedBytes).toBe(body.length + "GET /second HTTP/1.1\r\nhost: x\r\n\r\n".length);
    expect(server.requests).toEqual(["PUT /upload"]);
    expect(received.match(/HTTP\/1\.1 /g)).toHaveLength(1);
  });

  it("closes when the client closes its side", async () => {
    const server = await refusingServer({ maxMs: 5_000, maxBytes: MiB, idleMs: 5_000 });
    const socket = net.connect({ port: Number(new URL(server.origin).port), host: "127.0.0.1" });
    socket.on("error", () => {});
    await new Promise((resolve) => socket.once("connect", resolve));
    socket.write(putHead(100));
    socket.resume();
    // Node ends its own side when the server's FIN arrives (allowHalfOpen off), as most clients do.
    await new Promise((resolve) => socket.once("close", resolve));
    expect((await server.outcome(0)).reason).toBe("client-closed");
  });
});
