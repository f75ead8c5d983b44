import { describe, expect, it } from "vitest";
import { ManualClock } from "../../clock.ts";
import { MemoryRateLimiter } from "../ratelimit/index.ts";
import { defaultLoginLimits, delayAfter, SignInSlowdown, waitOnClock } from "./login-limits.ts";

describe("delayAfter", () => {
  it("waits nothing for the free failures, then 1 s doubling with each further one, at most the cap", () => {
    const delays = [...Array(18).keys()].map((failures) => delayAfter(failures, 10, 30_000));
    expect(delays).toEqual([
      0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000, 30_000,
    ]);
  });
});

describe("SignInSlowdown", () => {
  const setUp = () => {
    const clock = new ManualClock();
    const slowdown = new SignInSlowdown(new MemoryRateLimiter(clock), clock, defaultLoginLimits);
    return { clock, slowdown };
  };

  it("slows an account down after 10 failures, and more with each further one, up to 30 s", async () => {
    const { slowdown } = setUp();
    const counts = [slowdown.account("ann@example.com")];
    const delays: number[] = [];
    for (let i = 0; i < 20; i++) {
      delays.push(await slowdown.delayFor(counts));
      await slowdown.chargeFailure(counts);
    }
    expect(delays).toEqual([
      ...Array(10).fill(0),
      1000,
      2000,
      4000,
      8000,
      16_000,
      30_000,
      30_000,
      30_000,
      30_000,
      30_000,
    ]);
  });

  it("slows an address down after 30 failures, whatever accounts they were for; others are not slowed", async () => {
    const { slowdown } = setUp();
    for (let i = 0; i < 30; i++) {
      await slowdown.chargeFailure([slowdown.account(`guess-${i}`), slowdown.address("203.0.113.7")]);
    }
    expect(await slowdown.delayFor([slowdown.account("bob"), slowdown.address("203.0.113.7")])).toBe(1000);
    expect(await slowdown.delayFor([slowdown.account("bob"), slowdown.address("198.51.100.1")])).toBe(0);
  });

  it("forgets failures over the window: one every 90 s for an account", async () => {
    const { clock, slowdown } = setUp();
    const counts = [slowdown.account("ann")];
    for (let i = 0; i < 12; i++) await slowdown.chargeFailure(counts);
    expect(await slowdown.delayFor(counts)).toBe(4000);
    clock.advance(90_000);
    expect(await slowdown.delayFor(counts)).toBe(2000);
    clock.advance(3 * 90_000);
    expect(await slowdown.delayFor(counts)).toBe(0);
  });
});

describe("waitOnClock", () => {
  it("ends once the clock has moved on that far, not before", async () => {
    const clock = new ManualClock();
    let done = false;
    const waiting = waitOnClock(clock, 5000, 1).then(() => {
      done = true;
    });
    clock.advance(4999);
    await new Promise((resolve) => setImmediate(resolve));
    expect(done).toBe(false);
    clock.advance(1);
    await waiting;
    expect(done).toBe(true);
  });
});
