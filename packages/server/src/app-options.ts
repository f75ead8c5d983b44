import type { DestinationStream } from "pino";
import type { Clock } from "./clock.ts";
import type { Config } from "./config.ts";
import type { DatabaseHandle } from "./db/kysely.ts";
import type { AgentService } from "./features/agent/index.ts";
import type { TokenService } from "./features/auth/index.ts";
import type { ClientsService } from "./features/clients/index.ts";
import type { LoginLimitSettings, PeopleService } from "./features/people/index.ts";
import type { ChannelDeps, ChannelRegistry } from "./features/sessions/channel/index.ts";
import type { BlobStore } from "./storage/index.ts";

/** What `buildApp` (app.ts) takes: the configuration, and what tests replace. */
export interface AppOptions {
  config: Config;
  /** Time source for tokens and rate limits; tests pass a ManualClock. */
  clock?: Clock;
  /** Where logs go (stdout by default); tests capture them to check that no secret is logged. */
  logDestination?: DestinationStream;
  /** How often a waiting claim looks again without a wake-up (5 s); tests lengthen it to prove wake-ups. */
  claimPollIntervalMs?: number;
  /** The webhooks' backstop polls (fanOutBackstopMs, sendBackstopMs); tests lengthen them to prove wake-ups. */
  webhookBackstopMs?: { fanOut?: number; send?: number };
  /**
   * How long a rate-limit bucket outlives its refill in Redis (1 s). Redis expires keys in real time while a test's
   * ManualClock stands still: tests lengthen it, or a loaded machine's slow requests would see buckets vanish.
   */
  rateLimitKeySlackMs?: number;
  /** Failed sign-ins allowed per account and per address (10 and 30 in 15 minutes). */
  loginLimits?: LoginLimitSettings;
  /**
   * The relay's parts a test replaces (features/sessions/channel/channel-test-server.fixture.ts): a directory of
   * its own sessions, shorter grace and ping times, its own Redis key prefix, hooks that record what happened.
   */
  channel?: Partial<
    Pick<
      ChannelDeps,
      | "sessions"
      | "answerHere"
      | "onChannelLost"
      | "onSessionEnded"
      | "graceMs"
      | "liveness"
      | "holderKeyPrefix"
    >
  >;
}

export interface AppServices {
  database: DatabaseHandle;
  clients: ClientsService;
  people: PeopleService;
  tokens: TokenService;
  agents: AgentService;
  blobs: BlobStore;
  /** The agents' channels held by this instance (features/sessions/channel). */
  channels: ChannelRegistry;
  /**
   * Run first when the server closes, while it still answers: what runs beside it and talks to it over
   * HTTP (the local agent) stops here. Hooks cannot be added once the server listens; this list can.
   */
  beforeClose: Array<() => Promise<void>>;
}

declare module "fastify" {
  interface FastifyInstance {
    services: AppServices;
  }
}
