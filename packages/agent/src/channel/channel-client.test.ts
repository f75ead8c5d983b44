import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { type WebSocket, WebSocketServer } from "ws";
import { ChannelClient, type ChannelClientOptions } from "./channel-client.ts";
import type { ChannelCommand } from "./channel-messages.ts";

// The agent's end against a bare `ws` server speaking the server's frames (docs/appium-relay.md, "The channel"):
// what the server's suites cannot make the real server do (stay silent, send a command twice). The relay through
// the real server is tested in packages/server/src/features/sessions/channel/*.int.test.ts.

/** Values pushed by one side, awaited one by one: bounded waits on events, no sleeps. */
class Queue<T> {
  private readonly items: T[] = [];
  private readonly waiting: Array<(item: T) => void> = [];
  push(item: T): void {
    const wake = this.waiting.shift();
    if (wake) wake(item);
    else this.items.push(item);
  }
  next(): Promise<T> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise((resolve) => this.waiting.push(resolve));
  }
  get size(): number {
    return this.items.length;
  }
}

interface Connection {
  socket: WebSocket;
  url: string;
  apiKey: string | undefined;
  frames: Queue<Record<string, unknown>>;
}

const servers: WebSocketServer[] = [];
const clients: ChannelClient[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) await client.stop();
  for (const server of servers.splice(0)) {
    for (const socket of server.clients) socket.terminate();
    await new Promise((resolve) => server.close(resolve));
  }
});

async function startServer(options: { autoPong?: boolean } = {}) {
  const server = new WebSocketServer({ port: 0, host: "127.0.0.1", autoPong: options.autoPong ?? true });
  servers.push(server);
  await new Promise<void>((resolve) => server.once("listening", () => resolve()));
  const connections = new Queue<Connection>();
  server.on("connection", (socket, request) => {
    const frames = new Queue<Record<string, unknown>>();
    socket.on("message", (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
    const apiKey = request.headers["x-api-key"];
    connections.push({
      socket,
      url: request.url ?? "",
      apiKey: typeof apiKey === "string" ? apiKey : undefined,
      frames,
    });
  });
  const { port } = server.address() as AddressInfo;
  return { baseUrl: `http://127.0.0.1:${port}/v1`, connections };
}

function startClient(baseUrl: string, options: Partial<ChannelClientOptions> = {}): ChannelClient {
  const client = new ChannelClient({
    baseUrl,
    agentId: "mac-mini-1",
    tokens: { get: async () => "token-1", discard: () => {} },
    handle: async (command) => ({ status: 200, body: { value: command.path } }),
    // Short waits: the same rules, quicker.
    backoff: { initialMs: 20, maxMs: 50 },
    ...options,
  });
  clients.push(client);
  client.start();
  return client;
}

const command = (id: string, session: string, path: string) =>
  JSON.stringify({ type: "command", id, session, method: "GET", path });

describe("ChannelClient", () => {
  it("opens <base>/agent/channel with its agent_id and token, and answers each command with its ID", async () => {
    const { baseUrl, connections } = await startServer();
    startClient(baseUrl);
    const connection = await connections.next();
    expect(connection.url).toBe("/v1/agent/channel?agent_id=mac-mini-1");
    expect(connection.apiKey).toBe("token-1");
    connection.socket.send(command("c1", "ex_1", "/title"));
    expect(await connection.frames.next()).toEqual({
      type: "answer",
      id: "c1",
      status: 200,
      body: { value: "/title" },
    });
  });

  it("handles one session's commands one after another, other sessions' meanwhile", async () => {
    const { baseUrl, connections } = await startServer();
    const events: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    startClient(baseUrl, {
      handle: async ({ session, path }: ChannelCommand) => {
        events.push(`start ${session}${path}`);
        if (path === "/first") await held;
        events.push(`end ${session}${path}`);
        return { status: 200, body: null };
      },
    });
    const connection = await connections.next();
    connection.socket.send(command("c1", "ex_a", "/first"));
    connection.socket.send(command("c2", "ex_a", "/second"));
    connection.socket.send(command("c3", "ex_b", "/other"));
    expect((await connection.frames.next()).id).toBe("c3");
    release();
    expect((await connection.frames.next()).id).toBe("c1");
    expect((await connection.frames.next()).id).toBe("c2");
    expect(events).toEqual([
      "start ex_a/first",
      "start ex_b/other",
      "end ex_b/other",
      "end ex_a/first",
      "start ex_a/second",
      "end ex_a/second",
    ]);
  });

  it("answers a command sent again with the same ID from what it kept, without handling it twice", async () => {
    const { baseUrl, connections } = await startServer();
    let handled = 0;
    startClient(baseUrl, {
      handle: async () => {
        handled++;
        return { status: 200, body: { value: handled } };
      },
    });
    const first = await connections.next();
    first.socket.send(command("c1", "ex_1", "/click"));
    expect(await first.frames.next()).toMatchObject({ id: "c1", body: { value: 1 } });
    first.socket.terminate();
    // It reconnects by itself; the server sends the command again, as it does for those it had no answer to.
    const second = await connections.next();
    second.socket.send(command("c1", "ex_1", "/click"));
    expect(await second.frames.next()).toMatchObject({ id: "c1", body: { value: 1 } });
    expect(handled).toBe(1);
  });

  it("answers a handler's failure with a W3C unknown error", async () => {
    const { baseUrl, connections } = await startServer();
    startClient(baseUrl, {
      handle: async () => {
        throw new Error("Appium is gone");
      },
    });
    const connection = await connections.next();
    connection.socket.send(command("c1", "ex_1", "/title"));
    expect(await connection.frames.next()).toEqual({
      type: "answer",
      id: "c1",
      status: 500,
      body: {
        value: {
          error: "unknown error",
          message: "The agent could not relay the command: Appium is gone",
          stacktrace: "",
        },
      },
    });
  });

  it("sends ended frames said while the channel was down once it is up again", async () => {
    const { baseUrl, connections } = await startServer();
    const client = startClient(baseUrl);
    const first = await connections.next();
    const closed = new Promise<void>((resolve) => client.once("close", () => resolve()));
    first.socket.terminate();
    await closed;
    client.ended("ex_1", "idle_timeout");
    const second = await connections.next();
    expect(await second.frames.next()).toEqual({ type: "ended", session: "ex_1", reason: "idle_timeout" });
  });

  it("gives up on a server that stays silent and connects again", async () => {
    // The server never answers pings.
    const { baseUrl, connections } = await startServer({ autoPong: false });
    const client = startClient(baseUrl, { liveness: { pingIntervalMs: 50, silenceLimitMs: 200 } });
    await connections.next();
    const closed = new Promise<number>((resolve) => client.once("close", resolve));
    expect(await closed).toBe(1006);
    await connections.next();
  });

  it("stops: closes the channel and connects no more", async () => {
    const { baseUrl, connections } = await startServer();
    const client = startClient(baseUrl);
    const opened = new Promise<void>((resolve) => client.once("open", resolve));
    const connection = await connections.next();
    await opened;
    const closed = new Promise<number>((resolve) => connection.socket.once("close", resolve));
    await client.stop();
    expect(await closed).toBe(1000);
    expect(client.isOpen).toBe(false);
    expect(connections.size).toBe(0);
  });
});
