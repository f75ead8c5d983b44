// Shared by the Redis limiter's tests: where the test Redis is, a key prefix of the run's own, and cleaning up.
import { randomBytes } from "node:crypto";
import { Redis } from "ioredis";
import type { RateLimiterLogger } from "./redis-limiter.ts";

/** The Redis the tests use: Debian's, on the development and CI machines. */
export const testRedisUrl = process.env.TESTBAY_TEST_REDIS_URL ?? "redis://127.0.0.1:6379";

/** A prefix no other test run uses, so runs in parallel (and leftovers) cannot meet. */
export function testKeyPrefix(name: string): string {
  return `testbay-test:${name}:${randomBytes(6).toString("hex")}:`;
}

/** Deletes every key under `prefix`. */
export async function deleteKeys(prefix: string): Promise<void> {
  const redis = new Redis(testRedisUrl, { lazyConnect: true, disableClientInfo: true });
  try {
    await redis.connect();
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 1000);
      if (keys.length > 0) await redis.del(...keys);
      cursor = next;
    } while (cursor !== "0");
  } finally {
    redis.disconnect();
  }
}

/** Throws, saying how to start Redis, when the test Redis does not answer. */
export async function requireRedis(): Promise<void> {
  const redis = new Redis(testRedisUrl, {
    lazyConnect: true,
    disableClientInfo: true,
    retryStrategy: () => null,
    connectTimeout: 2000,
  });
  redis.on("error", () => {});
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw new Error(
      `Redis does not answer at ${testRedisUrl} (set TESTBAY_TEST_REDIS_URL, or start it: redis-server --daemonize yes): ${String(error)}`,
    );
  } finally {
    redis.disconnect();
  }
}

/** A logger that keeps what it is told. */
export function recordingLogger(): RateLimiterLogger & { warnings: string[]; infos: string[] } {
  const warnings: string[] = [];
  const infos: string[] = [];
  return {
    warnings,
    infos,
    warn: (_obj, msg) => void warnings.push(msg),
    info: (_obj, msg) => void infos.push(msg),
  };
}
