import type { AgentAddress } from "./channel-messages.ts";

/** Which instance holds an agent's channel, and how the others reach it. */
export interface ChannelHolder {
  /** The holding instance's ID (random per process). */
  instance: string;
  /** Its TESTBAY_INSTANCE_URL (an origin, no `/v1`). */
  url: string;
}

/**
 * Where agents' channels are held, for instances that must forward a command to the holder
 * (docs/appium-relay.md, "Several instances"). With one instance (no Redis) there is nobody to ask:
 * `LocalChannelHolders` knows of no other holder, and every command is relayed here.
 *
 * A record outlives its channel's close (it lapses unless renewed): while the agent reconnects, the instance that
 * held it last keeps its commands waiting, and the instance it reconnects to learns from the record whom to tell,
 * so those commands move there (channel.feature.ts).
 */
export interface ChannelHolders {
  /** Whether other instances may hold channels (Redis), or this one is alone. */
  readonly shared: boolean;
  /**
   * This instance took the agent's channel: records it (and keeps the record fresh while it lasts). Resolves with
   * the record it replaced when another instance wrote it.
   */
  held(agent: AgentAddress): Promise<ChannelHolder | undefined>;
  /** This instance's channel of the agent closed: the record is no longer renewed, and lapses. */
  closed(agent: AgentAddress): void;
  /** The last holder of the agent's channel, if any instance records one. */
  find(agent: AgentAddress): Promise<ChannelHolder | undefined>;
  /** Removes this instance's records (the server is closing) and disconnects. */
  close(): Promise<void>;
}

/** One instance: nothing to record, and no other instance to forward to. */
export class LocalChannelHolders implements ChannelHolders {
  readonly shared = false;
  async held(): Promise<undefined> {
    return undefined;
  }
  closed(): void {}
  async find(): Promise<undefined> {
    return undefined;
  }
  async close(): Promise<void> {}
}
