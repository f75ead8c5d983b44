// The Redis limiter as API instances use it: through the rate-limit hook, shared by two instances, and
// failing open when Redis is away. Needs only Redis (127.0.0.1:6379 or TESTBAY_TEST_REDIS_URL), whichever
// database project runs it.
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { createServer } from "node:net";
import Fastify, { type FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ManualClock } from "../../clock.ts";
import { registerErrorHandling } from "../../http/error-handler.ts";
import { healthRoutes } from "../health/health.routes.ts";
import type { RateLimitPolicy } from "./gcra.ts";
import { type RateLimitPolicies, registerRateLimiting } from "./ratelimit.hooks.ts";
import { RedisRateLimiter, type RedisRateLimiterOptions } from "./redis-limiter.ts";
import {
  deleteKeys,
  recordingLogger,
  requireRedis,
  testKeyPrefix,
  testRedisUrl,
} from "./redis-test-support.ts";

const policy: RateLimitPolicy = { name: "default", burst: 20, perSecond: 4 };
const policies: RateLimitPolicies = { default: policy, agent: { name: "agent", burst: 200, perSecond: 50 } };
const prefix = testKeyPrefix("int");
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(requireRedis);
afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
  await deleteKeys(prefix);
});

async function limiter(
  clock: ManualClock,
  options: Partial<RedisRateLimiterOptions> = {},
): Promise<RedisRateLimiter> {
  const created = await RedisRateLimiter.connect({
    url: testRedisUrl,
    clock,
    logger: recordingLogger(),
    keyPrefix: prefix,
    // Keys outlive the test even though the manual clock stands still while real time passes.
    ttlSlackMs: 600_000,
    commandTimeoutMs: 5000,
    ...options,
  });
  cleanups.push(() => created.close());
  return created;
}

/** An API instance reduced to what limiting needs: the real hook and error handling, one route. */
async function instance(rateLimiter: RedisRateLimiter): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  registerErrorHandling(app, undefined);
  registerRateLimiting(app, rateLimiter, policies, "test-deployment");
  app.get("/things", async () => ({ ok: true }));
  await app.ready();
  cleanups.push(() => app.close());
  return app;
}

let clients = 0;
const newClient = () => `client:${++clients}`;

describe("Redis rate limiter behind the hook", () => {
  it("admits a burst of 20 and refuses the 21st with a whole-second Retry-After", async () => {
    const clock = new ManualClock();
    const app = await instance(await limiter(clock));
    const remaining: number[] = [];
    for (let i = 0; i < 20; i++) {
      const response = await app.inject({ url: "/things", remoteAddress: "10.0.0.1" });
      expect(response.statusCode).toBe(200);
      remaining.push(Number(/r=(\d+)/.exec(String(response.headers.ratelimit))?.[1]));
    }
    expect(remaining).toEqual([...Array(20).keys()].reverse());
    const refused = await app.inject({ url: "/things", remoteAddress: "10.0.0.1" });
    expect(refused.statusCode).toBe(429);
    expect(refused.headers["retry-after"]).toBe("1");
    expect(refused.headers.ratelimit).toBe('"default";r=0;t=1');
    expect(refused.json()).toMatchObject({ code: "rate_limited", retry_after_seconds: 1 });
    // Another IP has a bucket of its own.
    expect((await app.inject({ url: "/things", remoteAddress: "10.0.0.2" })).statusCode).toBe(200);
  });

  it("refuses with the exact time to the next token", async () => {
    const clock = new ManualClock();
    const rateLimiter = await limiter(clock);
    const key = newClient();
    for (let i = 0; i < 20; i++) expect((await rateLimiter.consume(key, policy)).allowed).toBe(true);
    expect(await rateLimiter.consume(key, policy)).toEqual({
      allowed: false,
      remaining: 0,
      nextTokenMs: 250,
      retryAfterMs: 250,
    });
    clock.advance(249);
    expect(await rateLimiter.consume(key, policy)).toMatchObject({ allowed: false, retryAfterMs: 1 });
    clock.advance(1);
    expect((await rateLimiter.consume(key, policy)).allowed).toBe(true);
  });
});

describe("two API instances on one Redis", () => {
  it("admit 20 of a burst of 40 spread alternately over both, one after the other", async () => {
    const clock = new ManualClock();
    const instances = [await limiter(clock), await limiter(clock)];
    const key = newClient();
    let admitted = 0;
    for (let i = 0; i < 40; i++) if ((await instances[i % 2]?.consume(key, policy))?.allowed) admitted++;
    expect(admitted).toBe(20);
  });

  it("admit 20 of a burst of 40 sent all at once, over HTTP", async () => {
    const clock = new ManualClock();
    const apps = [await instance(await limiter(clock)), await instance(await limiter(clock))];
    const responses = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        apps[i % 2]?.inject({ url: "/things", remoteAddress: "10.0.1.1" }),
      ),
    );
    const codes = responses.map((r) => r?.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(20);
    expect(codes.filter((c) => c === 429)).toHaveLength(20);
  });

  it("converge on 4 requests per second for a client that keeps calling both", async () => {
    const clock = new ManualClock();
    const instances = [await limiter(clock), await limiter(clock)];
    const key = newClient();
    let admitted = 0;
    // 20 requests per simulated second for 60 simulated seconds, alternating instances.
    const seconds = 60;
    for (let step = 0; step < seconds * 20; step++) {
      if ((await instances[step % 2]?.consume(key, policy))?.allowed) admitted++;
      clock.advance(50);
    }
    expect(admitted).toBeGreaterThanOrEqual(20 + 4 * seconds - 1);
    expect(admitted).toBeLessThanOrEqual(20 + 4 * seconds);
  });
});

describe("when Redis cannot be reached", () => {
  it("admits every request, says it is degraded, and warns once a minute rather than once a call", async () => {
    const clock = new ManualClock();
    const logger = recordingLogger();
    // Nothing listens on port 1: every connection attempt is refused.
    const rateLimiter = await limiter(clock, { url: "redis://127.0.0.1:1", logger, connectTimeoutMs: 200 });
    expect(rateLimiter.status()).toBe("degraded");
    for (let i = 0; i < 100; i++) {
      const decision = await rateLimiter.consume("client:down", policy);
      expect(decision).toEqual({
        allowed: true,
        remaining: 20,
        nextTokenMs: 0,
        retryAfterMs: 0,
        failedOpen: true,
      });
      clock.advance(500); // 50 s in all
    }
    await expect(rateLimiter.check()).rejects.toThrow(/not connected/);
    expect(logger.warnings).toHaveLength(1);
    expect(logger.warnings[0]).toMatch(/Redis failed; admitting requests without limit/);
    clock.advance(10_000);
    await rateLimiter.consume("client:down", policy);
    expect(logger.warnings).toHaveLength(2);
    expect(rateLimiter.status()).toBe("degraded");
  });

  it("/readyz stays 200 but reports the rate limiter degraded; database and storage failures still give 503", async () => {
    const clock = new ManualClock();
    const rateLimiter = await limiter(clock, { url: "redis://127.0.0.1:1", connectTimeoutMs: 200 });
    let databaseUp = true;
    const app = Fastify({ logger: false });
    await app.register(healthRoutes, {
      checks: [
        {
          name: "database",
          check: async () => {
            if (!databaseUp) throw new Error("down");
          },
        },
        { name: "rate_limiter", check: () => rateLimiter.check(), degradable: true },
      ],
    });
    cleanups.push(() => app.close());
    const degraded = await app.inject({ url: "/readyz" });
    expect(degraded.statusCode).toBe(200);
    expect(degraded.json()).toEqual({
      status: "degraded",
      checks: [
        { name: "database", ok: true },
        { name: "rate_limiter", ok: false, degraded: true, error: "unreachable" },
      ],
    });
    databaseUp = false;
    const unavailable = await app.inject({ url: "/readyz" });
    expect(unavailable.statusCode).toBe(503);
    expect(unavailable.json()).toMatchObject({ status: "unavailable" });
  });

  it("is ok again once Redis answers again", async () => {
    const port = await freePort();
    let redis = await startRedis(port);
    const clock = new ManualClock();
    const logger = recordingLogger();
    const rateLimiter = await limiter(clock, {
      url: `redis://127.0.0.1:${port}`,
      logger,
      commandTimeoutMs: 200,
    });
    expect(rateLimiter.status()).toBe("ok");
    await rateLimiter.check();
    expect((await rateLimiter.consume("client:back", policy)).failedOpen).toBeUndefined();

    await stopRedis(redis);
    const during = await rateLimiter.consume("client:back", policy);
    expect(during.failedOpen).toBe(true);
    expect(rateLimiter.status()).toBe("degraded");
    await expect(rateLimiter.check()).rejects.toThrow();
    expect(logger.warnings).toHaveLength(1);

    redis = await startRedis(port);
    // The connection is retried in the background, at most 2 s apart.
    expect(await rateLimiter.ready(10_000)).toBe(true);
    await rateLimiter.check();
    expect(rateLimiter.status()).toBe("ok");
    expect(logger.infos).toContain("rate limiter: Redis answers again; limiting requests");
    // The bucket is new: Redis was started empty.
    expect(await rateLimiter.consume("client:back", policy)).toMatchObject({ allowed: true, remaining: 19 });
    await rateLimiter.close();
    await stopRedis(redis);
  });
});

async function freePort(): Promise<number> {
  const server = createServer();
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  const address = server.address();
  await new Promise((resolve) => server.close(resolve));
  if (typeof address !== "object" || !address) throw new Error("no port");
  return address.port;
}

/** A throwaway Redis of this test's own: no persistence, gone when stopped. */
async function startRedis(port: number): Promise<ChildProcess> {
  const child = spawn(
    "redis-server",
    ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"],
    { stdio: ["ignore", "pipe", "inherit"] },
  );
  cleanups.push(() => stopRedis(child));
  let output = "";
  child.stdout?.setEncoding("utf8");
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`redis-server did not start:\n${output}`)), 10_000);
    child.once("error", (error) => {
      clearTimeout(timer);
      reject(new Error(`redis-server could not be started (is it installed?): ${error.message}`));
    });
    child.stdout?.on("data", (chunk: string) => {
      output += chunk;
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    });
  });
  child.stdout?.resume();
  return child;
}

async function stopRedis(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  await exited;
}
