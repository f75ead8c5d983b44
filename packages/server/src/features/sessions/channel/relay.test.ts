import { describe, expect, it } from "vitest";
import type { ChannelHolder, ChannelHolders } from "./channel-holders.ts";
import type { AgentAddress, RelayedAnswer, RelayedCommand } from "./channel-messages.ts";
import type { ChannelRegistry } from "./channel-registry.ts";
import { ChannelRelay } from "./relay.ts";
import type { RelayForwarder } from "./relay-forwarder.ts";

const agent: AgentAddress = { organizationId: "org_a", agentId: "agent-1" };
const command: RelayedCommand = { session: "s1", method: "GET", path: "/source" };
const answer: RelayedAnswer = { status: 200, body: { value: "<hierarchy/>" } };

/**
 * An instance that holds no channel itself, with Redis naming `holder()` as the agent's holder (looked up in
 * `lookups`) and instances that answer forwarded commands while `holding` names them (forwarded to `sent`).
 */
function elsewhere(start: ChannelHolder) {
  let current = start;
  const lookups: string[] = [];
  const sent: string[] = [];
  const holding = new Set([start.url]);
  const holders = {
    shared: true,
    find: async () => {
      lookups.push(current.url);
      return current;
    },
  } as unknown as ChannelHolders;
  const forwarder = {
    // Undefined: the instance no longer holds the channel (409) or went away; the relay looks again.
    forward: async (url: string) => {
      sent.push(url);
      return holding.has(url) ? answer : undefined;
    },
  } as unknown as RelayForwarder;
  const registry = {
    holds: () => false,
    opened: async () => false,
    send: async () => ({ status: 404, body: { value: { error: "invalid session id" } } }),
  } as unknown as ChannelRegistry;
  const relay = new ChannelRelay(registry, holders, "instance-here", forwarder, 10_000);
  return {
    relay,
    lookups,
    sent,
    moveTo(next: ChannelHolder) {
      holding.delete(current.url);
      current = next;
      holding.add(next.url);
    },
  };
}

describe("ChannelRelay, forwarding to the instance holding the agent's channel", () => {
  it("looks the holder up once for a session's commands while it answers them", async () => {
    const other = elsewhere({ instance: "b", url: "http://b" });
    for (let i = 0; i < 3; i++) expect(await other.relay.send(agent, command)).toEqual(answer);
    expect(other.lookups).toEqual(["http://b"]);
    expect(other.sent).toEqual(["http://b", "http://b", "http://b"]);
  });

  it("looks again at once when the holder it knew no longer holds the channel, and sends it there", async () => {
    const other = elsewhere({ instance: "b", url: "http://b" });
    await other.relay.send(agent, command);
    other.moveTo({ instance: "c", url: "http://c" });
    expect(await other.relay.send(agent, command)).toEqual(answer);
    expect(other.lookups).toEqual(["http://b", "http://c"]);
    expect(other.sent).toEqual(["http://b", "http://b", "http://c"]);
  });
});
