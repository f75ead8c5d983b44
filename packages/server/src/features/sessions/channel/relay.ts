import { LRUCache } from "lru-cache";
import { w3cErrorAnswer } from "../w3c-errors.ts";
import type { ChannelHolder, ChannelHolders } from "./channel-holders.ts";
import { type AgentAddress, agentKey, type RelayedAnswer, type RelayedCommand } from "./channel-messages.ts";
import type { ChannelRegistry } from "./channel-registry.ts";
import type { RelayForwarder } from "./relay-forwarder.ts";

/**
 * What the WebDriver command routes relay through: a session's command to the agent holding its device, answered
 * with Appium's status and body (or the W3C error the client should see). Never rejects.
 */
export interface Relay {
  send(agent: AgentAddress, command: RelayedCommand): Promise<RelayedAnswer>;
}

/** While no instance holds the agent's channel, how often a waiting command looks again for its holder. */
const holderLookEveryMs = 250;

/**
 * Relays down the agent's channel when this instance holds it; else forwards once to the instance that Redis
 * names as the holder (docs/appium-relay.md, "Several instances"). When no instance holds it (the agent is
 * reconnecting), the command waits up to the grace period for a channel, here or on another instance (looked up
 * again every 250 ms). With one instance (no Redis) it waits in the registry, which sends it as soon as the
 * channel is back. A holder that cannot be reached (it went away) is treated as no holder.
 *
 * Commands that waited on an instance the agent then reconnected away from are handed over by that instance
 * (movedAway, told by the new holder: channel.feature.ts), with their IDs, so the one in flight is not run twice.
 */
export class ChannelRelay implements Relay {
  /**
   * Holders that answered the last command forwarded to them, so the next one skips the Redis lookup (a third
   * of what forwarding added: docs/appium-relay.md "Speed"). Never stale for long: a holder that lost the
   * channel answers 409 or cannot be reached, and the command is then sent as if nothing were known.
   */
  private readonly knownHolders = new LRUCache<string, ChannelHolder>({ max: 10_000 });

  constructor(
    private readonly registry: ChannelRegistry,
    private readonly holders: ChannelHolders,
    private readonly instance: string,
    private readonly forwarder: RelayForwarder,
    private readonly graceMs: number,
  ) {}

  async send(agent: AgentAddress, command: RelayedCommand): Promise<RelayedAnswer> {
    if (this.registry.holds(agent) || !this.holders.shared) return this.registry.send(agent, command);
    const key = agentKey(agent);
    const known = this.knownHolders.get(key);
    if (known) {
      const answer = await this.forwarder.forward(known.url, agent, command);
      if (answer) return answer;
      this.knownHolders.delete(key);
    }
    const deadline = Date.now() + this.graceMs;
    for (;;) {
      const holder = await this.holders.find(agent);
      if (holder && holder.instance !== this.instance) {
        const answer = await this.forwarder.forward(holder.url, agent, command);
        if (answer) {
          this.knownHolders.set(key, holder);
          return answer;
        }
      }
      const left = deadline - Date.now();
      // Here, or the time is up: the registry sends it now, or answers it once its own wait ends.
      if (this.registry.holds(agent) || left <= 0)
        return this.registry.send(agent, command, { waitMs: left });
      await this.registry.opened(agent, Math.min(left, holderLookEveryMs));
    }
  }

  /**
   * A command another instance forwarded: relayed here, never forwarded again (so never in a loop), with the ID
   * it was given when it comes from an instance the agent's channel moved away from. `elsewhere` when the channel
   * is not here and another instance holds it now (the sender looked it up just before it moved): the sender
   * looks again, rather than the command waiting here for a channel that will not come back.
   */
  async sendForwarded(
    agent: AgentAddress,
    command: RelayedCommand,
    id?: string,
  ): Promise<RelayedAnswer | "elsewhere"> {
    if (!this.registry.holds(agent)) {
      const holder = await this.holders.find(agent);
      if (holder && holder.instance !== this.instance) return "elsewhere";
    }
    return this.registry.send(agent, command, id === undefined ? {} : { id });
  }

  /**
   * The agent's channel is now held by another instance (it said so: see channel.feature.ts): the commands
   * waiting here go there, each forwarded once with its ID, in the order they came.
   */
  async movedAway(agent: AgentAddress): Promise<void> {
    const withdrawn = this.registry.withdraw(agent);
    if (withdrawn.length === 0) return;
    const holder = await this.holders.find(agent);
    for (const { id, command, answer } of withdrawn) {
      const forwarded =
        holder && holder.instance !== this.instance
          ? this.forwarder.forward(holder.url, agent, command, id)
          : Promise.resolve(undefined);
      void forwarded.then((value) =>
        answer(value ?? lostAnswer("the agent's channel moved and cannot be reached")),
      );
    }
  }
}

function lostAnswer(why: string): RelayedAnswer {
  return w3cErrorAnswer("invalid session id", `The session is lost: ${why}.`);
}
