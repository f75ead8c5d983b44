import { Redis, type RedisOptions } from "ioredis";
import type { Clock } from "../../clock.ts";
import { loggableConnectionError, redactConnectionUrl } from "../../redact-connection-url.ts";
import { gcra, type RateLimitDecision, type RateLimitPolicy } from "./gcra.ts";
import type { RateLimiter } from "./limiter.ts";

/**
 * gcra.ts, line for line, in Lua: one script decides and stores atomically, so concurrent requests of one
 * client on any number of API instances are decided one after the other against one bucket.
 *
 * KEYS[1] the bucket; ARGV: now (ms), burst, perSecond, TTL slack (ms).
 * Lua numbers are IEEE doubles like JavaScript's, and the operations are the same in the same order, so the
 * results are the same bit for bit. Numbers cross the boundary as text: in, JavaScript's shortest round-trip
 * form (parsed exactly by tonumber); out, and in the stored TAT, `%.17g`, which round-trips any double (a Lua
 * number returned as such would be truncated to an integer reply). Returns
 * {allowed (1/0), remaining, nextTokenMs, retryAfterMs}.
 *
 * A refused request leaves the bucket alone (no write), as in memory. An admitted one stores the new TAT with a
 * TTL: once the TAT has passed the bucket is full, which is what a missing key means too, so the key can go.
 */
const gcraScript = `
local now = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local perSecond = tonumber(ARGV[3])
local slack = tonumber(ARGV[4])
local interval = 1000 / perSecond
local capacity = burst * interval
local stored = redis.call('GET', KEYS[1])
local start = now
if stored then start = math.max(tonumber(stored), now) end
local nextTat = start + interval
local function num(x) return string.format('%.17g', x) end

if nextTat - now > capacity then
  local used = start - now
  return {0, '0', num(math.max(0, used - (capacity - interval))), num(nextTat - now - capacity)}
end
local used = nextTat - now
local remaining = math.floor((capacity - used) / interval + 1e-9)
local partial = used - (burst - remaining - 1) * interval
redis.call('SET', KEYS[1], num(nextTat), 'PX', math.ceil(used) + slack)
return {1, num(remaining), num(math.max(0, partial)), '0'}
`;

type GcraReply = [number, string, string, string];

/** The script as a command of the connection: EVALSHA, and EVAL once when Redis does not know the script yet. */
interface WithGcra {
  testbayGcra(key: string, now: string, burst: string, perSecond: string, slack: string): Promise<GcraReply>;
}

/** What the limiter logs through: a pino logger fits. */
export interface RateLimiterLogger {
  warn(obj: object, msg: string): void;
  info?(obj: object, msg: string): void;
}

export interface RedisRateLimiterOptions {
  /** `redis://[user:password@]host:port[/db]` or `rediss://…` (TESTBAY_REDIS_URL). */
  url: string;
  /** The API instance's clock: the time every decision is made at (see the note on clocks below). */
  clock: Clock;
  logger: RateLimiterLogger;
  /** Prepended to every bucket's key. Default `testbay:rl:`. */
  keyPrefix?: string;
  /** A command that has no answer within this many ms fails, and the request is admitted. Default 200. */
  commandTimeoutMs?: number;
  /** Giving up on a (re)connection attempt after this many ms. Default 1000. */
  connectTimeoutMs?: number;
  /** The shortest time between two warnings about Redis, in ms of the clock. Default 60,000. */
  warnIntervalMs?: number;
  /**
   * Kept on top of the time a bucket takes to refill, in ms. Default 1000: an instance whose clock lags the
   * writer's by up to this much still finds the key while, by its clock, the bucket is not full yet.
   */
  ttlSlackMs?: number;
  /** Further ioredis options (tests); they override the ones set here. */
  redisOptions?: RedisOptions;
}

/**
 * Buckets in Redis, shared by every API instance, so a client's limit holds across instances. Same decisions as
 * MemoryRateLimiter for the same sequence of (now, key, policy): redis-limiter.test.ts checks it.
 *
 * Clocks: `now` is the calling instance's Clock, passed to the script, not Redis's TIME. That keeps the algorithm
 * one (the same arithmetic on the same inputs as in memory), and tests with a manual clock deterministic. It
 * assumes the instances' clocks agree (NTP keeps them within a few ms): an instance whose clock is d ms ahead
 * sees every bucket d ms fuller than the others do, so a client moving between instances gains or loses at most
 * about d × perSecond / 1000 tokens (0.04 of one at 4/s with d = 10 ms); a clock that lags never makes a bucket
 * fuller than it is, since the stored TAT only grows (max(TAT, now)).
 *
 * Fails open: when Redis cannot be reached, or a command fails or times out (`commandTimeoutMs`), the request is
 * admitted (a decision with `failedOpen`), the problem is logged at most once per `warnIntervalMs`, and
 * `status()` says "degraded" until Redis answers again; `check()` (for /readyz) rejects meanwhile. Commands are
 * never queued while disconnected (`enableOfflineQueue: false`), so a request never waits for a reconnection;
 * the connection is retried in the background (at most every 2 s).
 */
export class RedisRateLimiter implements RateLimiter {
  private readonly redis: Redis & WithGcra;
  private readonly clock: Clock;
  private readonly logger: RateLimiterLogger;
  private readonly keyPrefix: string;
  private readonly warnIntervalMs: number;
  private readonly slack: string;
  /** The last command failed, and none has succeeded since. */
  private failing = false;
  private lastWarnAt: number | undefined;
  /** Problems seen since the last warning, not logged one by one. */
  private suppressed = 0;
  private closed = false;
  private readonly connectTimeoutMs: number;
  /** The Redis URL with its password hidden: what log lines and errors name. */
  private readonly where: string;

  /**
   * A limiter whose connection is up, or that gave up waiting after `connectTimeoutMs` (then it starts degraded,
   * admitting requests, having logged why, and keeps trying to connect). Never rejects: an API instance starts
   * whether or not Redis answers.
   */
  static async connect(options: RedisRateLimiterOptions): Promise<RedisRateLimiter> {
    const limiter = new RedisRateLimiter(options);
    if (!(await limiter.ready())) {
      limiter.problem(new Error(`Redis not connected within ${limiter.connectTimeoutMs} ms`));
    }
    return limiter;
  }

  /** Connects at once, in the background: until connected, requests are admitted (see `connect`). */
  constructor(options: RedisRateLimiterOptions) {
    this.clock = options.clock;
    this.logger = options.logger;
    this.keyPrefix = options.keyPrefix ?? "testbay:rl:";
    this.warnIntervalMs = options.warnIntervalMs ?? 60_000;
    this.slack = String(Math.max(0, Math.ceil(options.ttlSlackMs ?? 1000)));
    this.connectTimeoutMs = options.connectTimeoutMs ?? 1000;
    this.where = redactConnectionUrl(options.url);
    this.redis = connectTo(
      this.where,
      () =>
        new Redis(options.url, {
          commandTimeout: options.commandTimeoutMs ?? 200,
          connectTimeout: this.connectTimeoutMs,
          // Fail fast rather than wait: no queue while disconnected, no resending after a reconnection.
          enableOfflineQueue: false,
          maxRetriesPerRequest: 0,
          autoResendUnfulfilledCommands: false,
          // Reconnect for ever, backing off to every 2 s.
          retryStrategy: (times) => Math.min(times * 100, 2000),
          // No auto-pipelining: it delays each command to the next turn of the event loop, which doubled a lone
          // request's round trip on loopback (0.41 against 0.18 ms) and gained nothing at 50 in flight.
          // Redis before 7.2 has no CLIENT SETINFO: skip a command that would fail on every connection.
          disableClientInfo: true,
          ...options.redisOptions,
        }),
    ) as Redis & WithGcra;
    this.redis.defineCommand("testbayGcra", { numberOfKeys: 1, lua: gcraScript });
    // Without a listener ioredis prints every connection error to stderr.
    this.redis.on("error", (error: Error) => this.problem(error));
    this.redis.on("ready", () => {
      if (this.failing) this.recovered();
    });
  }

  async consume(key: string, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    const now = this.clock.now();
    try {
      const [allowed, remaining, nextTokenMs, retryAfterMs] = await this.redis.testbayGcra(
        this.keyPrefix + key,
        String(now),
        String(policy.burst),
        String(policy.perSecond),
        this.slack,
      );
      if (this.failing) this.recovered();
      return {
        allowed: allowed === 1,
        remaining: Number(remaining),
        nextTokenMs: Number(nextTokenMs),
        retryAfterMs: Number(retryAfterMs),
      };
    } catch (error) {
      this.problem(error);
      return { allowed: true, remaining: policy.burst, nextTokenMs: 0, retryAfterMs: 0, failedOpen: true };
    }
  }

  /**
   * Reads the bucket's TAT and decides in JavaScript with gcra.ts, the arithmetic the script runs (the TAT is
   * stored as `%.17g`, which Number parses exactly). Nothing is written. Fails open like `consume`.
   */
  async peek(key: string, policy: RateLimitPolicy): Promise<RateLimitDecision> {
    const now = this.clock.now();
    try {
      const stored = await this.redis.get(this.keyPrefix + key);
      if (this.failing) this.recovered();
      return gcra(policy, now, stored === null ? undefined : Number(stored)).decision;
    } catch (error) {
      this.problem(error);
      return { allowed: true, remaining: policy.burst, nextTokenMs: 0, retryAfterMs: 0, failedOpen: true };
    }
  }

  /** Resolves true once connected, false when not connected within `timeoutMs` (default: connectTimeoutMs). */
  async ready(timeoutMs = this.connectTimeoutMs): Promise<boolean> {
    if (this.redis.status === "ready") return true;
    return new Promise<boolean>((resolve) => {
      const done = (connected: boolean) => {
        clearTimeout(timer);
        this.redis.off("ready", onReady);
        resolve(connected);
      };
      const onReady = () => done(true);
      const timer = setTimeout(() => done(this.redis.status === "ready"), timeoutMs);
      this.redis.on("ready", onReady);
    });
  }

  /** "degraded" while Redis is unreachable or its last answer was an error: requests are then admitted unlimited. */
  status(): "ok" | "degraded" {
    return this.failing || this.redis.status !== "ready" ? "degraded" : "ok";
  }

  /**
   * For /readyz: resolves when Redis answers and runs the script (one throwaway bucket, gone within about a
   * second), rejects while degraded. A success ends a degraded spell, as an admitted request would.
   */
  async check(): Promise<void> {
    if (this.redis.status !== "ready") {
      throw new Error(`rate limiter: Redis not connected (${this.redis.status})`);
    }
    try {
      await this.redis.testbayGcra(
        `${this.keyPrefix}readyz`,
        String(this.clock.now()),
        "1",
        "1000",
        this.slack,
      );
    } catch (error) {
      this.problem(error);
      throw error;
    }
    if (this.failing) this.recovered();
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    try {
      await this.redis.quit();
    } catch {
      // Not connected: nothing to say goodbye to.
      this.redis.disconnect();
    }
  }

  private problem(error: unknown): void {
    if (this.closed) return;
    this.failing = true;
    const now = this.clock.now();
    if (this.lastWarnAt !== undefined && now - this.lastWarnAt < this.warnIntervalMs) {
      this.suppressed++;
      return;
    }
    // Not the error itself: ioredis attaches the failed command, and a failed AUTH carries the password.
    this.logger.warn(
      { error: loggableConnectionError(error), redis: this.where, suppressed: this.suppressed },
      "rate limiter: Redis failed; admitting requests without limit until it answers again",
    );
    this.lastWarnAt = now;
    this.suppressed = 0;
  }

  private recovered(): void {
    this.failing = false;
    this.logger.info?.({}, "rate limiter: Redis answers again; limiting requests");
  }
}

/** Opens the client; a URL it cannot parse is named (password hidden) rather than thrown as "Invalid URL". */
function connectTo(where: string, open: () => Redis): Redis {
  try {
    return open();
  } catch (error) {
    throw new Error(`cannot use Redis at ${where}: ${loggableConnectionError(error).message}`);
  }
}
