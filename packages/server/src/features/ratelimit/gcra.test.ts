import { describe, expect, it } from "vitest";
import { ManualClock } from "../../clock.ts";
import type { RateLimitPolicy } from "./gcra.ts";
import { MemoryRateLimiter } from "./memory-limiter.ts";

const policy: RateLimitPolicy = { name: "default", burst: 20, perSecond: 4 };

describe("GCRA token bucket (in memory)", () => {
  it("admits a burst of 20, refuses the 21st and says when to retry", async () => {
    const limiter = new MemoryRateLimiter(new ManualClock());
    const decisions = [];
    for (let i = 0; i < 21; i++) decisions.push(await limiter.consume("c", policy));
    expect(decisions.slice(0, 20).every((d) => d.allowed)).toBe(true);
    expect(decisions.map((d) => d.remaining).slice(0, 20)).toEqual([...Array(20).keys()].reverse());
    expect(decisions[20]).toMatchObject({ allowed: false, remaining: 0, retryAfterMs: 250 });
  });

  it("regains one token every 250 ms", async () => {
    const clock = new ManualClock();
    const limiter = new MemoryRateLimiter(clock);
    for (let i = 0; i < 20; i++) await limiter.consume("c", policy);
    clock.advance(249);
    expect((await limiter.consume("c", policy)).allowed).toBe(false);
    clock.advance(1);
    expect((await limiter.consume("c", policy)).allowed).toBe(true);
    expect((await limiter.consume("c", policy)).allowed).toBe(false);
  });

  it("converges on 4 requests per second under saturation", async () => {
    const clock = new ManualClock();
    const limiter = new MemoryRateLimiter(clock);
    let admitted = 0;
    // A client hammering at 100 requests per second for 10 simulated minutes.
    const seconds = 600;
    for (let step = 0; step < seconds * 100; step++) {
      if ((await limiter.consume("c", policy)).allowed) admitted++;
      clock.advance(10);
    }
    // The burst is spent once; afterwards exactly the sustained rate gets through.
    expect(admitted).toBeGreaterThanOrEqual(20 + 4 * seconds - 1);
    expect(admitted).toBeLessThanOrEqual(20 + 4 * seconds);
  });

  it("does not charge refused requests, so a client that backs off is not punished further", async () => {
    const clock = new ManualClock();
    const limiter = new MemoryRateLimiter(clock);
    for (let i = 0; i < 20; i++) await limiter.consume("c", policy);
    for (let i = 0; i < 50; i++) expect((await limiter.consume("c", policy)).allowed).toBe(false);
    clock.advance(250);
    expect((await limiter.consume("c", policy)).allowed).toBe(true);
  });

  it("keeps clients apart", async () => {
    const limiter = new MemoryRateLimiter(new ManualClock());
    for (let i = 0; i < 20; i++) await limiter.consume("a", policy);
    expect((await limiter.consume("a", policy)).allowed).toBe(false);
    expect((await limiter.consume("b", policy)).allowed).toBe(true);
  });

  it("reports the time to the next token, and none for a full bucket", async () => {
    const clock = new ManualClock();
    const limiter = new MemoryRateLimiter(clock);
    const first = await limiter.consume("c", policy);
    expect(first).toMatchObject({ remaining: 19, nextTokenMs: 250 });
    clock.advance(100);
    expect(await limiter.consume("c", policy)).toMatchObject({ remaining: 18, nextTokenMs: 150 });
    clock.advance(10_000);
    const full = await limiter.consume("c", policy);
    expect(full.remaining).toBe(19);
  });

  it("forgets buckets that have refilled, so memory stays bounded by active clients", async () => {
    const clock = new ManualClock();
    const limiter = new MemoryRateLimiter(clock);
    for (let i = 0; i < 10_000; i++) await limiter.consume(`client-${i}`, policy);
    expect(limiter.size).toBe(10_000);
    clock.advance(60_000);
    for (let i = 0; i < 10_000; i++) await limiter.consume("busy", policy);
    expect(limiter.size).toBeLessThan(10);
  });
});
