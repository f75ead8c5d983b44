import { randomUUID } from "node:crypto";
import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { Clock } from "../../../clock.ts";
import type { Config } from "../../../config.ts";
import type { SigningKey } from "../../auth/index.ts";
import { channelRoutes, closeAnsweredUpgrades } from "./channel.routes.ts";
import { type ChannelHolders, LocalChannelHolders } from "./channel-holders.ts";
import type { LivenessTimes } from "./channel-liveness.ts";
import type { AgentAddress } from "./channel-messages.ts";
import { ChannelRegistry, defaultGraceMs } from "./channel-registry.ts";
import { instanceUrlOf } from "./instance-url.ts";
import { ChannelRelay } from "./relay.ts";
import { RelayForwarder } from "./relay-forwarder.ts";
import { relayInternalRoutes } from "./relay-internal.routes.ts";
import { RelaySignature } from "./relay-signature.ts";
import type { SessionDirectory } from "./session-directory.ts";
import { type AnswerHere, webDriverCommandRoutes } from "./webdriver-command.routes.ts";

export interface ChannelDeps {
  config: Pick<Config, "redisUrl" | "instanceUrl" | "host">;
  /** The server's signing key: forwarded commands are signed with a key derived from it (relay-signature.ts). */
  signingKey: Pick<SigningKey, "privateKey">;
  clock: Clock;
  log: FastifyBaseLogger;
  /** Finds the agent holding a session's device (the sessions table). */
  sessions: SessionDirectory;
  /** Commands answered by Testbay, not relayed (setSessionStatus through /execute/sync; features/sessions). */
  answerHere?: AnswerHere;
  /** An agent's channel stayed gone for `graceMs` on every instance: its sessions are lost (API.md §12). */
  onChannelLost?(agent: AgentAddress): void | Promise<void>;
  /** The agent ended a session on its own (`ended` frame): stop relaying its commands. */
  onSessionEnded?(agent: AgentAddress, session: string, reason: string): void;
  /** 10 s by default; tests shorten it. */
  graceMs?: number;
  /** Pings every 15 s, 45 s of silence; tests shorten them. */
  liveness?: LivenessTimes;
  /** Redis key prefix of the holder records (`testbay:channel:`); tests use their own. */
  holderKeyPrefix?: string;
}

/**
 * The relay's composition root (API.md §12, "The relay"; docs/appium-relay.md): the agents' channels
 * (`GET /v1/agent/channel`), where each is held (Redis with several instances, nothing to record with one), the
 * forwarding between instances (`POST /v1/internal/relay`), and the WebDriver command routes
 * (`/wd/hub/session/{id}/…`, `DELETE /wd/hub/session/{id}`) that relay through them.
 */
export async function createChannel(deps: ChannelDeps) {
  const { config, log } = deps;
  /** This process among the instances: a holder record names it, so that it never forwards to itself. */
  const instance = randomUUID();
  let server: FastifyInstance | undefined;
  const instanceUrl = () => instanceUrlOf(config.instanceUrl, config.host, server?.server.address() ?? null);
  const holders: ChannelHolders = config.redisUrl
    ? await connectRedisHolders({
        url: config.redisUrl,
        instance,
        instanceUrl,
        log,
        ...(deps.holderKeyPrefix ? { keyPrefix: deps.holderKeyPrefix } : {}),
      })
    : new LocalChannelHolders();
  const signature = new RelaySignature(deps.signingKey.privateKey, () => deps.clock.now());
  const forwarder = new RelayForwarder(signature, log);
  const registry = new ChannelRegistry({
    ...(deps.graceMs === undefined ? {} : { graceMs: deps.graceMs }),
    ...(deps.liveness ? { liveness: deps.liveness } : {}),
    log,
    // The agent reconnected here while another instance held its channel: that one hands over what waits there.
    onOpened: (agent) => {
      void holders.held(agent).then((previous) => previous && forwarder.notifyMoved(previous.url, agent));
    },
    onClosed: (agent) => holders.closed(agent),
    onChannelLost: async (agent) => {
      // Gone from here, but perhaps back on another instance: then its sessions go on there.
      const holder = await holders.find(agent);
      if (holder && holder.instance !== instance) return;
      await deps.onChannelLost?.(agent);
    },
    onSessionEnded: (agent, session, reason) => deps.onSessionEnded?.(agent, session, reason),
  });
  const relay = new ChannelRelay(registry, holders, instance, forwarder, deps.graceMs ?? defaultGraceMs);
  return {
    /** For the sessions feature: relays a command to a session's agent, wherever its channel is held. */
    relay,
    registry,
    /** Adds the channel, the internal relay and the WebDriver command routes (none is in the OpenAPI document). */
    async register(app: FastifyInstance): Promise<void> {
      server = app;
      closeAnsweredUpgrades(app);
      await app.register(channelRoutes, { registry, clock: deps.clock });
      await app.register(relayInternalRoutes, { relay, signature });
      await app.register(webDriverCommandRoutes, {
        directory: deps.sessions,
        relay,
        ...(deps.answerHere ? { answerHere: deps.answerHere } : {}),
      });
    },
    /** Closes the channels (agents reconnect to another instance) and removes this instance's holder records. */
    async stop(): Promise<void> {
      registry.close();
      await holders.close();
      await forwarder.close();
    },
  };
}

/** Loads ioredis only with Redis configured, as ratelimit.feature.ts does. */
async function connectRedisHolders(
  options: import("./redis-channel-holders.ts").RedisChannelHoldersOptions,
): Promise<ChannelHolders> {
  const { RedisChannelHolders } = await import("./redis-channel-holders.ts");
  return new RedisChannelHolders(options);
}
