import { Redis } from "ioredis";
import { loggableConnectionError, redactConnectionUrl } from "../../../redact-connection-url.ts";
import type { ChannelHolder, ChannelHolders } from "./channel-holders.ts";
import type { AgentAddress } from "./channel-messages.ts";

/** The record's life and how often a holder renews it (docs/appium-relay.md, "Several instances"). */
export const holderRecordTimes = { expiryMs: 60_000, renewEveryMs: 20_000 };

export interface RedisChannelHoldersOptions {
  url: string;
  /** This instance's ID (random per process): a record is renewed and removed only by the instance that wrote it. */
  instance: string;
  /** This instance's URL as the others reach it; known once the server listens (instance-url.ts). */
  instanceUrl: () => string;
  /** `testbay:channel:` by default; tests use a prefix of their own. */
  keyPrefix?: string;
  log: { warn(object: object, message: string): void };
}

/** Writes the record and returns the one it replaced. */
const takeScript = `
local previous = redis.call("GET", KEYS[1])
redis.call("SET", KEYS[1], ARGV[1], "PX", ARGV[2])
return previous`;

/** Renews the record only while it is still the caller's: another instance may have taken the agent since. */
const renewScript = `
local value = redis.call("GET", KEYS[1])
if value and cjson.decode(value).instance == ARGV[1] then return redis.call("PEXPIRE", KEYS[1], ARGV[2]) end
return 0`;

/** Deletes the record only if it is still the caller's. */
const removeScript = `
local value = redis.call("GET", KEYS[1])
if value and cjson.decode(value).instance == ARGV[1] then return redis.call("DEL", KEYS[1]) end
return 0`;

/**
 * Agents' channel holders in Redis: `testbay:channel:<organization id>/<agent id>` → `{instance, url}` with a
 * 60 s expiry renewed every 20 s while the channel is open here. When the channel closes the record is left to
 * lapse (see ChannelHolders); when the server closes, its records are deleted. An instance that died stops
 * renewing, so its records lapse within a minute. Agent IDs are unique per organization only (the agents
 * table's key), so the organization is part of the key.
 *
 * Redis unreachable: records cannot be written or read, so a command is relayed by the instance it reached, which
 * waits for the channel as if the agent were reconnecting (warned once per failure, not per command).
 */
export class RedisChannelHolders implements ChannelHolders {
  readonly shared = true;
  private readonly redis: Redis;
  private readonly keyPrefix: string;
  private readonly renewals = new Map<string, NodeJS.Timeout>();
  private failing = false;

  constructor(private readonly options: RedisChannelHoldersOptions) {
    this.keyPrefix = options.keyPrefix ?? "testbay:channel:";
    this.redis = new Redis(options.url, {
      commandTimeout: 500,
      connectTimeout: 1000,
      // Fail fast rather than wait: no queue while disconnected (as features/ratelimit/redis-limiter.ts).
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      retryStrategy: (times) => Math.min(times * 100, 2000),
      disableClientInfo: true,
    });
    this.redis.on("error", (error: Error) => this.problem(error));
  }

  async held(agent: AgentAddress): Promise<ChannelHolder | undefined> {
    const key = this.keyOf(agent);
    clearInterval(this.renewals.get(key));
    const timer = setInterval(() => {
      this.redis
        .eval(renewScript, 1, key, this.options.instance, holderRecordTimes.expiryMs)
        .then((renewed) => {
          this.recovered();
          if (renewed === 0) this.stopRenewing(key);
        }, this.problem);
    }, holderRecordTimes.renewEveryMs);
    timer.unref();
    this.renewals.set(key, timer);
    const value = JSON.stringify({ instance: this.options.instance, url: this.options.instanceUrl() });
    try {
      const previous = await this.redis.eval(takeScript, 1, key, value, holderRecordTimes.expiryMs);
      this.recovered();
      const holder = typeof previous === "string" ? readHolder(previous) : undefined;
      return holder && holder.instance !== this.options.instance ? holder : undefined;
    } catch (error) {
      this.problem(error);
      return undefined;
    }
  }

  closed(agent: AgentAddress): void {
    this.stopRenewing(this.keyOf(agent));
  }

  async find(agent: AgentAddress): Promise<ChannelHolder | undefined> {
    try {
      const value = await this.redis.get(this.keyOf(agent));
      this.recovered();
      return value === null ? undefined : readHolder(value);
    } catch (error) {
      this.problem(error);
      return undefined;
    }
  }

  async close(): Promise<void> {
    const keys = [...this.renewals.keys()];
    for (const key of keys) this.stopRenewing(key);
    await Promise.all(
      keys.map((key) => this.redis.eval(removeScript, 1, key, this.options.instance).catch(() => undefined)),
    );
    this.redis.disconnect();
  }

  private stopRenewing(key: string): void {
    clearInterval(this.renewals.get(key));
    this.renewals.delete(key);
  }

  private keyOf(agent: AgentAddress): string {
    return `${this.keyPrefix}${agent.organizationId}/${agent.agentId}`;
  }

  private readonly problem = (error: unknown): void => {
    if (this.failing) return;
    this.failing = true;
    this.options.log.warn(
      { err: loggableConnectionError(error), redis: redactConnectionUrl(this.options.url) },
      "agent channel holders: Redis failed; commands are relayed by the instance they reach",
    );
  };

  private recovered(): void {
    this.failing = false;
  }
}

function readHolder(value: string): ChannelHolder | undefined {
  try {
    const record = JSON.parse(value) as Partial<ChannelHolder>;
    if (typeof record.instance !== "string" || typeof record.url !== "string") return undefined;
    return { instance: record.instance, url: record.url };
  } catch {
    return undefined;
  }
}
