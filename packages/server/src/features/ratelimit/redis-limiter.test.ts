// Needs the Redis at 127.0.0.1:6379 (or TESTBAY_TEST_REDIS_URL): the point is to run the real Lua script.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../clock.ts";
import type { RateLimitDecision, RateLimitPolicy } from "./gcra.ts";
import { MemoryRateLimiter } from "./memory-limiter.ts";
import { RedisRateLimiter } from "./redis-limiter.ts";
import {
  deleteKeys,
  recordingLogger,
  requireRedis,
  testKeyPrefix,
  testRedisUrl,
} from "./redis-test-support.ts";

const prefix = testKeyPrefix("unit");
const limiters: RedisRateLimiter[] = [];

async function redisLimiter(clock: ManualClock): Promise<RedisRateLimiter> {
  const limiter = await RedisRateLimiter.connect({
    url: testRedisUrl,
    clock,
    logger: recordingLogger(),
    keyPrefix: prefix,
    // Redis expires keys by its own, real clock while the manual one stands still: keep them for the whole test.
    ttlSlackMs: 600_000,
    // A busy test machine must not turn a slow answer into an admitted request.
    commandTimeoutMs: 5000,
  });
  limiters.push(limiter);
  return limiter;
}

beforeAll(requireRedis);
afterAll(async () => {
  for (const limiter of limiters) await limiter.close();
  await deleteKeys(prefix);
});

/** Deterministic pseudo-random numbers in [0, 1) (mulberry32), so a failure can be replayed. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const policies: RateLimitPolicy[] = [
  { name: "default", burst: 20, perSecond: 4 },
  { name: "agent", burst: 200, perSecond: 50 },
  // Intervals that are not whole milliseconds (333.3…, 1428.57…, 0.1): fractions must survive the round trip.
  { name: "thirds", burst: 7, perSecond: 3 },
  { name: "slow", burst: 5, perSecond: 0.7 },
  { name: "fast", burst: 1, perSecond: 10_000 },
];

interface Step {
  advanceMs: number;
  key: string;
  policy: RateLimitPolicy;
}

/** Bursts, trickles, pauses long enough to refill, and several clients with their own policies, interleaved. */
function sequence(seed: number, length: number): Step[] {
  const next = random(seed);
  const steps: Step[] = [];
  for (let i = 0; i < length; i++) {
    const r = next();
    const advanceMs =
      r < 0.5
        ? 0
        : r < 0.8
          ? Math.floor(next() * 300)
          : r < 0.95
            ? next() * 1000
            : Math.floor(next() * 20_000);
    const client = Math.floor(next() * policies.length);
    steps.push({ advanceMs, key: `eq:${seed}:${client}`, policy: policies[client] as RateLimitPolicy });
  }
  return steps;
}

describe("RedisRateLimiter decides exactly as MemoryRateLimiter", () => {
  it.each([1, 2, 3])("for the same sequence of (now, key, policy), seed %i", async (seed) => {
    const clock = new ManualClock();
    const memory = new MemoryRateLimiter(clock);
    const redis = await redisLimiter(clock);
    const fromMemory: RateLimitDecision[] = [];
    const fromRedis: RateLimitDecision[] = [];
    for (const { advanceMs, key, policy } of sequence(seed, 2000)) {
      clock.advance(advanceMs);
      fromMemory.push(await memory.consume(key, policy));
      fromRedis.push(await redis.consume(key, policy));
    }
    // Every field, exactly (toEqual compares numbers with Object.is): both admitted and refused happened.
    expect(fromRedis).toEqual(fromMemory);
    expect(fromMemory.some((d) => d.allowed)).toBe(true);
    expect(fromMemory.some((d) => !d.allowed)).toBe(true);
    expect(redis.status()).toBe("ok");
  });

  it("for a burst, the refusals after it and the refill, field by field", async () => {
    const clock = new ManualClock();
    const memory = new MemoryRateLimiter(clock);
    const redis = await redisLimiter(clock);
    const policy = policies[0] as RateLimitPolicy;
    for (const advanceMs of [...Array(25).fill(0), 100, 149, 1, 0, 250, 3000, 10_000]) {
      clock.advance(advanceMs);
      expect(await redis.consume("burst", policy)).toEqual(await memory.consume("burst", policy));
    }
  });

  it("peeks as memory does, and a peek charges nothing", async () => {
    const clock = new ManualClock();
    const memory = new MemoryRateLimiter(clock);
    const redis = await redisLimiter(clock);
    const policy = policies[2] as RateLimitPolicy;
    const peeks: RateLimitDecision[] = [];
    for (const advanceMs of [0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 250, 400, 5000]) {
      clock.advance(advanceMs);
      const fromMemory = await memory.peek("peek", policy);
      expect(await redis.peek("peek", policy)).toEqual(fromMemory);
      peeks.push(fromMemory);
      expect(await redis.consume("peek", policy)).toEqual(await memory.consume("peek", policy));
    }
    expect(peeks.some((d) => !d.allowed)).toBe(true);
    // Peeking a thousand times leaves the bucket as it was.
    for (let i = 0; i < 1000; i++) await memory.peek("untouched", policy);
    expect((await memory.consume("untouched", policy)).remaining).toBe(policy.burst - 1);
  });

  it("lets a refilled bucket's key expire in Redis", async () => {
    const clock = new ManualClock();
    const limiter = await RedisRateLimiter.connect({
      url: testRedisUrl,
      clock,
      logger: recordingLogger(),
      keyPrefix: prefix,
      ttlSlackMs: 0,
    });
    limiters.push(limiter);
    // One token of 2 ms: the bucket is full again 2 ms later, and then the key is gone.
    await limiter.consume("expiring", { name: "x", burst: 5, perSecond: 500 });
    await new Promise((resolve) => setTimeout(resolve, 50));
    const { Redis } = await import("ioredis");
    const redis = new Redis(testRedisUrl, { disableClientInfo: true });
    try {
      expect(await redis.exists(`${prefix}expiring`)).toBe(0);
    } finally {
      redis.disconnect();
    }
  });
});
