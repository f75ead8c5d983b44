import net from "node:net";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ChannelClient, type ChannelCommand } from "../../../../../agent/src/channel/index.ts";
import { replacedCloseCode, tokenExpiredCloseCode } from "./channel-registry.ts";
import {
  AsyncQueue,
  type ChannelTestServer,
  connectBareAgent,
  refusedUpgrade,
  startChannelServer,
  webDriver,
} from "./channel-test-server.fixture.ts";

// The relay between the server and an agent (API.md §12, "The relay"; docs/appium-relay.md): WebDriver commands
// over HTTP, relayed down the agent's WebSocket to a handler standing in for Appium, answered back unchanged.
// The agent's end is the real ChannelClient, or a bare WebSocket where a test needs to drop or replace it.

interface Deferred<T> {
  promise: Promise<T>;
  resolve(value: T): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => {
    resolve = r;
  });
  return { promise, resolve };
}

let t: ChannelTestServer;
const clients: ChannelClient[] = [];

beforeAll(async () => {
  t = await startChannelServer();
});
afterEach(async () => {
  for (const client of clients.splice(0)) await client.stop();
});
afterAll(() => t.server.close());

/** A ChannelClient for `agentId` whose commands the test answers; resolves once its channel is open. */
async function startAgent(
  agentId: string,
  handle: (command: ChannelCommand) => Promise<{ status: number; body: unknown }>,
  baseUrl = t.server.baseUrl,
): Promise<ChannelClient> {
  const client = new ChannelClient({
    baseUrl,
    agentId,
    tokens: { get: async () => t.agentToken, discard: () => {} },
    handle,
  });
  clients.push(client);
  const opened = new Promise<void>((resolve) => client.once("open", resolve));
  client.start();
  await opened;
  return client;
}

function session(id: string, agentId: string): string {
  t.directory.sessions.set(id, { organizationId: t.organizationId, agentId });
  return id;
}

describe("a relayed command", () => {
  it("reaches the agent's handler with its session, method, path and body, and comes back as Appium answered", async () => {
    const seen: ChannelCommand[] = [];
    await startAgent("relay-1", async (command) => {
      seen.push(command);
      if (command.path === "/element") {
        return { status: 200, body: { value: { "element-6066-11e4-a52e-4f735466cecf": "el-1" } } };
      }
      return {
        status: 404,
        body: {
          value: { error: "no such element", message: "An element could not be located", stacktrace: "at x" },
        },
      };
    });
    const id = session("ex_relay1", "relay-1");
    const found = await webDriver(t.server.origin, "POST", `/session/${id}/element`, {
      using: "accessibility id",
      value: "Login",
    });
    expect(found).toEqual({
      status: 200,
      contentType: "application/json; charset=utf-8",
      body: { value: { "element-6066-11e4-a52e-4f735466cecf": "el-1" } },
    });
    // Appium's errors pass through as they are: status and body, stack trace included.
    const missing = await webDriver(t.server.origin, "GET", `/session/${id}/element/el-9/text`);
    expect(missing.status).toBe(404);
    expect(missing.body).toEqual({
      value: { error: "no such element", message: "An element could not be located", stacktrace: "at x" },
    });
    const deleted = await webDriver(t.server.origin, "DELETE", `/session/${id}`);
    expect(deleted.status).toBe(404);
    expect(seen).toEqual([
      { session: id, method: "POST", path: "/element", body: { using: "accessibility id", value: "Login" } },
      { session: id, method: "GET", path: "/element/el-9/text" },
      { session: id, method: "DELETE", path: "" },
    ]);
  });

  it("that Testbay answers itself (setSessionStatus) is not relayed; other scripts are", async () => {
    const seen: ChannelCommand[] = [];
    await startAgent("here-1", async (command) => {
      seen.push(command);
      return { status: 200, body: { value: "from appium" } };
    });
    const id = session("ex_here", "here-1");
    const status = { script: 'testbay: {"action": "setSessionStatus", "status": "failed"}', args: [] };
    expect((await webDriver(t.server.origin, "POST", `/session/${id}/execute/sync`, status)).body).toEqual({
      value: null,
    });
    const other = { script: "mobile: shell", args: [{ command: "echo" }] };
    expect((await webDriver(t.server.origin, "POST", `/session/${id}/execute/sync`, other)).body).toEqual({
      value: "from appium",
    });
    expect(seen.map((command) => command.body)).toEqual([other]);
  });

  it("for an unknown or ended session is a W3C invalid session id, never a problem document", async () => {
    const unknown = await webDriver(t.server.origin, "GET", "/session/ex_nobody/url");
    expect(unknown.status).toBe(404);
    expect(unknown.contentType).toBe("application/json; charset=utf-8");
    expect(unknown.body).toEqual({
      value: { error: "invalid session id", message: "No active session with ID ex_nobody.", stacktrace: "" },
    });
    t.directory.sessions.set("ex_over", { ended: "The session ended: idle for 90 s without a command." });
    const ended = await webDriver(t.server.origin, "POST", "/session/ex_over/url", { url: "x" });
    expect(ended.status).toBe(404);
    expect(ended.body).toMatchObject({ value: { error: "invalid session id", message: /idle for 90 s/ } });
  });

  it("with a body that is not JSON is a W3C invalid argument", async () => {
    session("ex_badjson", "nobody-home");
    const answer = await webDriver(t.server.origin, "POST", "/session/ex_badjson/url", "{not json");
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ value: { error: "invalid argument" } });
  });

  it("is not rate limited and passes the caller's claimed client to the directory", async () => {
    await startAgent("relay-many", async () => ({ status: 200, body: { value: null } }));
    const id = session("ex_many", "relay-many");
    const before = t.directory.callers.length;
    // More than the default burst of 20 in one go: none refused.
    const answers = await Promise.all(
      Array.from({ length: 40 }, () =>
        webDriver(t.server.origin, "GET", `/session/${id}/title`, undefined, { "x-api-key": t.ciToken }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(40).fill(200));
    const basic = `Basic ${Buffer.from(`${t.ciClientId}:secret`).toString("base64")}`;
    await webDriver(t.server.origin, "GET", `/session/${id}/title`, undefined, { authorization: basic });
    const callers = t.directory.callers.slice(before);
    expect(callers.slice(0, 40)).toEqual(Array(40).fill({ clientId: t.ciClientId }));
    expect(callers[40]).toEqual({ clientId: t.ciClientId });
  });
});

describe("order", () => {
  it("keeps one session's commands in turn while another session's are answered meanwhile", async () => {
    const events: string[] = [];
    const firstHeld = deferred<void>();
    const firstArrived = deferred<void>();
    await startAgent("order-1", async (command) => {
      const name = `${command.session}${command.path}`;
      events.push(`start ${name}`);
      if (command.path === "/one") {
        firstArrived.resolve();
        await firstHeld.promise;
      }
      events.push(`end ${name}`);
      return { status: 200, body: { value: name } };
    });
    const a = session("ex_a", "order-1");
    const b = session("ex_b", "order-1");
    const one = webDriver(t.server.origin, "POST", `/session/${a}/one`, {});
    await firstArrived.promise;
    const two = webDriver(t.server.origin, "POST", `/session/${a}/two`, {});
    // Another session is not held up by ex_a's first command.
    expect((await webDriver(t.server.origin, "GET", `/session/${b}/other`)).body).toEqual({
      value: "ex_b/other",
    });
    firstHeld.resolve();
    expect((await one).body).toEqual({ value: "ex_a/one" });
    expect((await two).body).toEqual({ value: "ex_a/two" });
    expect(events).toEqual([
      "start ex_a/one",
      "start ex_b/other",
      "end ex_b/other",
      "end ex_a/one",
      "start ex_a/two",
      "end ex_a/two",
    ]);
  });
});

describe("the channel", () => {
  it("is refused before the upgrade without a token (401) and for a client that is no agent (403)", async () => {
    const none = await refusedUpgrade(t.server.baseUrl, {});
    expect(none.status).toBe(401);
    expect(none.contentType).toMatch(/^application\/problem\+json/);
    expect(none.body).toMatchObject({ code: "invalid_access_token", reason: "missing" });
    const ci = await refusedUpgrade(t.server.baseUrl, { "x-api-key": t.ciToken });
    expect(ci.status).toBe(403);
    expect(ci.body).toMatchObject({ code: "forbidden" });
  });

  it("leaves no connection open after an upgrade it answered over HTTP, on its path or any other", async () => {
    for (const path of ["/v1/agent/channel?agent_id=x", "/v1/me", "/nowhere"]) {
      const { status, ended } = await rawUpgrade(t.server.origin, path);
      expect(status).toBeGreaterThanOrEqual(400);
      expect(ended).toBe(true);
    }
  });

  it("refused for good (403) stops the ChannelClient and says so", async () => {
    const refused = deferred<number>();
    const client = new ChannelClient({
      baseUrl: t.server.baseUrl,
      agentId: "not-an-agent",
      tokens: { get: async () => t.ciToken, discard: () => {} },
      handle: async () => ({ status: 500, body: null }),
      onRefused: (status) => refused.resolve(status),
    });
    clients.push(client);
    client.start();
    expect(await refused.promise).toBe(403);
  });

  it("of an agent that connects again replaces the old one, which is closed with 4000", async () => {
    const old = await connectBareAgent(t.server.baseUrl, t.agentToken, "replaced-1");
    const id = session("ex_replace", "replaced-1");
    const first = webDriver(t.server.origin, "GET", `/session/${id}/url`);
    const frame = await old.frames.next();
    expect(frame).toMatchObject({ type: "command", session: id, method: "GET", path: "/url" });
    old.socket.send(JSON.stringify({ type: "answer", id: frame.id, status: 200, body: { value: "old" } }));
    expect((await first).body).toEqual({ value: "old" });

    await startAgent("replaced-1", async () => ({ status: 200, body: { value: "new" } }));
    expect(await old.closed).toBe(replacedCloseCode);
    expect((await webDriver(t.server.origin, "GET", `/session/${id}/url`)).body).toEqual({ value: "new" });
  });

  it("dropped and back within 10 s: the command in flight is sent again with its ID, and commands sent meanwhile wait", async () => {
    const first = await connectBareAgent(t.server.baseUrl, t.agentToken, "dropped-1");
    const id = session("ex_drop", "dropped-1");
    const inFlight = webDriver(t.server.origin, "POST", `/session/${id}/click`, {});
    const sent = await first.frames.next();
    first.socket.terminate();
    await first.closed;
    const meanwhile = webDriver(t.server.origin, "GET", `/session/${id}/source`);
    const second = await connectBareAgent(t.server.baseUrl, t.agentToken, "dropped-1");
    // Both come down the new channel (on two instances the one it reached may be the other: they come over).
    const frames = [await second.frames.next(), await second.frames.next()];
    const again = frames.find((frame) => frame.path === "/click");
    const waited = frames.find((frame) => frame.path === "/source");
    expect(again).toEqual(sent);
    expect(waited).toMatchObject({ type: "command", session: id, method: "GET" });
    second.socket.send(
      JSON.stringify({ type: "answer", id: again?.id, status: 200, body: { value: "clicked" } }),
    );
    second.socket.send(
      JSON.stringify({ type: "answer", id: waited?.id, status: 200, body: { value: "<x/>" } }),
    );
    expect((await inFlight).body).toEqual({ value: "clicked" });
    expect((await meanwhile).body).toEqual({ value: "<x/>" });
    second.socket.close();
  });

  it("dropped by the server: the ChannelClient reconnects by itself, and a command in flight reaches its handler once", async () => {
    const calls = new AsyncQueue<ChannelCommand>();
    const held = deferred<void>();
    const client = await startAgent("reconnects-1", async (command) => {
      calls.push(command);
      if (command.path === "/slow") await held.promise;
      return { status: 200, body: { value: command.path } };
    });
    const id = session("ex_reconnect", "reconnects-1");
    const slow = webDriver(t.server.origin, "POST", `/session/${id}/slow`, {});
    expect((await calls.next()).path).toBe("/slow");
    const reopened = new Promise<void>((resolve) => client.once("open", resolve));
    for (const channel of t.channels) {
      channel.drop({ organizationId: t.organizationId, agentId: "reconnects-1" });
    }
    await reopened;
    // The server sent /slow again on the new channel; the agent answers it from the first run, not a second.
    held.resolve();
    expect((await slow).body).toEqual({ value: "/slow" });
    expect((await webDriver(t.server.origin, "GET", `/session/${id}/title`)).body).toEqual({
      value: "/title",
    });
    expect((await calls.next()).path).toBe("/title");
    expect(calls.size).toBe(0);
  });

  it("carries the agent's ended frames to the server", async () => {
    const client = await startAgent("ends-1", async () => ({ status: 200, body: null }));
    client.ended("ex_idle", "idle_timeout");
    expect(await t.ended.next()).toEqual({
      agent: { organizationId: t.organizationId, agentId: "ends-1" },
      session: "ex_idle",
      reason: "idle_timeout",
    });
  });
});

describe("the internal relay", () => {
  it("refuses a forwarded command that no instance signed, and never relays it", async () => {
    const bare = await connectBareAgent(t.server.baseUrl, t.agentToken, "forged-1");
    const body = JSON.stringify({
      agent: { organizationId: t.organizationId, agentId: "forged-1" },
      command: { session: "ex_forged", method: "GET", path: "/source" },
    });
    for (const signature of [undefined, `t=${Date.now()},v1=${"0".repeat(64)}`, "garbage"]) {
      const response = await fetch(`${t.server.origin}/v1/internal/relay`, {
        method: "POST",
        headers: {
          "content-type": "application/json",
          ...(signature ? { "x-testbay-relay-signature": signature } : {}),
        },
        body,
      });
      expect(response.status).toBe(404);
    }
    // A command the test sends itself comes through: the forged ones above were not queued before it.
    const id = session("ex_forged_check", "forged-1");
    const answer = webDriver(t.server.origin, "GET", `/session/${id}/title`);
    const frame = await bare.frames.next();
    expect(frame).toMatchObject({ session: id, path: "/title" });
    bare.socket.send(JSON.stringify({ type: "answer", id: frame.id, status: 200, body: { value: "ok" } }));
    expect((await answer).body).toEqual({ value: "ok" });
    bare.socket.close();
  });
});

describe("a channel gone for longer than the grace period", () => {
  let short: ChannelTestServer;
  beforeAll(async () => {
    // 10 s, and pings every 15 s with 45 s of silence, in production; the same rules with shorter waits.
    short = await startChannelServer({
      graceMs: 500,
      liveness: { pingIntervalMs: 100, silenceLimitMs: 400 },
    });
  });
  afterAll(() => short.server.close());

  it("answers what waited with invalid session id and reports the agent lost", async () => {
    const agent = await connectBareAgent(short.server.baseUrl, short.agentToken, "lost-1");
    short.directory.sessions.set("ex_lost", { organizationId: short.organizationId, agentId: "lost-1" });
    const inFlight = webDriver(short.server.origin, "GET", "/session/ex_lost/source");
    await agent.frames.next();
    agent.socket.terminate();
    const answer = await inFlight;
    expect(answer.status).toBe(404);
    expect(answer.body).toMatchObject({
      value: { error: "invalid session id", message: expect.stringMatching(/channel has been gone/) },
    });
    expect(await short.lost.next()).toEqual({ organizationId: short.organizationId, agentId: "lost-1" });
    // Nothing left waiting: a later command waits its grace period again, then gets the same answer.
    const later = await webDriver(short.server.origin, "GET", "/session/ex_lost/source");
    expect(later.body).toMatchObject({ value: { error: "invalid session id" } });
  });

  it("is closed by the server when the agent stays silent, and kept while it answers pings", async () => {
    const answering = await connectBareAgent(short.server.baseUrl, short.agentToken, "pings-1");
    const silent = await connectBareAgent(short.server.baseUrl, short.agentToken, "silent-1", {
      answerPings: false,
    });
    // 1006: the server cut the connection without a closing handshake (it terminates a silent peer).
    expect(await silent.closed).toBe(1006);
    expect(answering.socket.readyState).toBe(answering.socket.OPEN);
    answering.socket.close();
  });

  it("takes a new token when the agent's was refused (401), and opens with it", async () => {
    const discarded: string[] = [];
    let calls = 0;
    const client = new ChannelClient({
      baseUrl: short.server.baseUrl,
      agentId: "token-1",
      tokens: {
        get: async () => (calls++ === 0 ? "not-a-token" : short.agentToken),
        discard: (token) => discarded.push(token),
      },
      handle: async () => ({ status: 200, body: null }),
    });
    const opened = new Promise<void>((resolve) => client.once("open", resolve));
    client.start();
    await opened;
    await client.stop();
    expect(discarded).toEqual(["not-a-token"]);
  });

  // Last: it moves the server's clock to 300 ms before the agent's token expires.
  it("is closed (4001) when the token it was opened with expires, so the agent authenticates again", async () => {
    short.server.clock.advance(24 * 3600 * 1000 - 300);
    const agent = await connectBareAgent(short.server.baseUrl, short.agentToken, "expiring-1");
    expect(await agent.closed).toBe(tokenExpiredCloseCode);
  });
});

/** An upgrade request on a raw socket: the status the server answered, and whether it then closed the socket. */
function rawUpgrade(origin: string, path: string): Promise<{ status: number; ended: boolean }> {
  const { hostname, port } = new URL(origin);
  return new Promise((resolve, reject) => {
    const socket = net.connect(Number(port), hostname);
    let text = "";
    socket.setEncoding("utf8");
    socket.on("data", (chunk: string) => {
      text += chunk;
    });
    socket.on("error", reject);
    // The server's close is awaited; were it never to come, the test's own timeout fails it.
    socket.on("end", () => {
      resolve({ status: Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1] ?? 0), ended: true });
      socket.destroy();
    });
    socket.write(
      `GET ${path} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n` +
        "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n",
    );
  });
}
