import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ChannelClient, type ChannelCommand } from "../../../../../agent/src/channel/index.ts";
import { loadSigningKey } from "../../auth/index.ts";
import { replacedCloseCode } from "./channel-registry.ts";
import {
  type ChannelTestServer,
  connectBareAgent,
  startChannelServer,
  webDriver,
} from "./channel-test-server.fixture.ts";
import { RelaySignature, relaySignatureHeader } from "./relay-signature.ts";

// Scaled configuration only (Vitest project `scaled`): two API instances on one PostgreSQL database and one Redis.
// An agent's channel is held by one instance; a command that reaches the other is forwarded once, over HTTP, to
// the holder that Redis names (docs/appium-relay.md, "Several instances"), and the client cannot tell.

let t: ChannelTestServer;
let client: ChannelClient;
const seen: ChannelCommand[] = [];

beforeAll(async () => {
  t = await startChannelServer();
  expect(t.server.instances).toHaveLength(2);
  const holder = t.server.instances[0];
  if (!holder) throw new Error("two instances expected");
  client = new ChannelClient({
    baseUrl: holder.baseUrl,
    agentId: "far-1",
    tokens: { get: async () => t.agentToken, discard: () => {} },
    handle: async (command) => {
      seen.push(command);
      return { status: 200, body: { value: `${command.method} ${command.path}` } };
    },
  });
  const opened = new Promise<void>((resolve) => client.once("open", resolve));
  client.start();
  await opened;
  t.directory.sessions.set("ex_far", { organizationId: t.organizationId, agentId: "far-1" });
});
afterAll(async () => {
  await client?.stop();
  await t?.server.close();
});

describe("a command sent to the instance that does not hold the agent's channel", () => {
  it("is forwarded once to the holder and answered as if it held it", async () => {
    const [first, second] = t.server.instances;
    if (!first || !second) throw new Error("two instances expected");
    const agent = { organizationId: t.organizationId, agentId: "far-1" };
    expect(t.channels.map((channel) => channel.holds(agent))).toEqual([true, false]);
    const answer = await webDriver(second.origin, "POST", "/session/ex_far/element", {
      using: "id",
      value: "x",
    });
    expect(answer).toEqual({
      status: 200,
      contentType: "application/json; charset=utf-8",
      body: { value: "POST /element" },
    });
    // Relayed once: the agent saw the command one time.
    expect(seen).toEqual([
      { session: "ex_far", method: "POST", path: "/element", body: { using: "id", value: "x" } },
    ]);
    const viaHolder = await webDriver(first.origin, "GET", "/session/ex_far/title");
    expect(viaHolder.body).toEqual({ value: "GET /title" });
    expect(seen).toHaveLength(2);
  });

  it("is forwarded in order: a run of commands on the far instance comes back in the order sent", async () => {
    const second = t.server.instances[1];
    if (!second) throw new Error("two instances expected");
    const before = seen.length;
    for (let i = 0; i < 20; i++) {
      const answer = await webDriver(second.origin, "GET", `/session/ex_far/n/${i}`);
      expect(answer.body).toEqual({ value: `GET /n/${i}` });
    }
    expect(seen.slice(before).map((c) => c.path)).toEqual(Array.from({ length: 20 }, (_, i) => `/n/${i}`));
  });
});

describe("an agent whose channel moves to the other instance", () => {
  it("has its old channel closed with 4000 there, as a replacement on one instance would", async () => {
    const [first, second] = t.server.instances;
    if (!first || !second) throw new Error("two instances expected");
    const old = await connectBareAgent(first.baseUrl, t.agentToken, "moving-1");
    await connectBareAgent(second.baseUrl, t.agentToken, "moving-1");
    expect(await old.closed).toBe(replacedCloseCode);
  });

  it("gets the commands that waited on the instance it left, the one in flight with its ID", async () => {
    const [first, second] = t.server.instances;
    if (!first || !second) throw new Error("two instances expected");
    t.directory.sessions.set("ex_moving", { organizationId: t.organizationId, agentId: "moving-2" });
    const before = await connectBareAgent(first.baseUrl, t.agentToken, "moving-2");
    const inFlight = webDriver(first.origin, "POST", "/session/ex_moving/click", {});
    const sent = await before.frames.next();
    before.socket.terminate();
    await before.closed;
    // Sent while no channel is open: to the instance that held it last, where it waits.
    const meanwhile = webDriver(first.origin, "GET", "/session/ex_moving/source");
    const after = await connectBareAgent(second.baseUrl, t.agentToken, "moving-2");
    const frames = [await after.frames.next(), await after.frames.next()];
    const again = frames.find((frame) => frame.path === "/click");
    const waited = frames.find((frame) => frame.path === "/source");
    expect(again).toEqual(sent);
    expect(waited).toMatchObject({ type: "command", session: "ex_moving", method: "GET" });
    after.socket.send(
      JSON.stringify({ type: "answer", id: again?.id, status: 200, body: { value: "clicked" } }),
    );
    after.socket.send(
      JSON.stringify({ type: "answer", id: waited?.id, status: 200, body: { value: "<x/>" } }),
    );
    expect((await inFlight).body).toEqual({ value: "clicked" });
    expect((await meanwhile).body).toEqual({ value: "<x/>" });
    // And what comes to the instance it left from now on is forwarded to the one it holds the channel on.
    const later = webDriver(first.origin, "GET", "/session/ex_moving/title");
    const frame = await after.frames.next();
    after.socket.send(JSON.stringify({ type: "answer", id: frame.id, status: 200, body: { value: "t" } }));
    expect((await later).body).toEqual({ value: "t" });
    after.socket.close();
  });
});

describe("a forwarded command that reaches an instance the channel moved away from", () => {
  it("is answered 409, so that the sender looks for the holder again, and is not relayed there", async () => {
    const [first, second] = t.server.instances;
    if (!first || !second) throw new Error("two instances expected");
    // far-1's channel is on the first instance: the second one is asked as if a lookup had been stale.
    const signingKey = await loadSigningKey(first.app.services.database.db, undefined, t.server.clock);
    const signature = new RelaySignature(signingKey.privateKey, () => t.server.clock.now());
    const body = JSON.stringify({
      agent: { organizationId: t.organizationId, agentId: "far-1" },
      command: { session: "ex_far", method: "GET", path: "/stale" },
    });
    const before = seen.length;
    const response = await fetch(`${second.origin}/v1/internal/relay`, {
      method: "POST",
      headers: { "content-type": "application/json", [relaySignatureHeader]: signature.sign(body) },
      body,
    });
    expect(response.status).toBe(409);
    // Signed alike, to the holder: relayed (so the 409 above was about where the channel is, not the signature).
    const held = await fetch(`${first.origin}/v1/internal/relay`, {
      method: "POST",
      headers: { "content-type": "application/json", [relaySignatureHeader]: signature.sign(body) },
      body,
    });
    expect(await held.json()).toEqual({ status: 200, body: { value: "GET /stale" } });
    expect(seen.slice(before).map((command) => command.path)).toEqual(["/stale"]);
  });
});
