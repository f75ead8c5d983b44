import { describe, expect, it } from "vitest";
import { FakeClock } from "./clock.ts";
import { Pacer } from "./pacing.ts";

const headers = (values: Record<string, string>) => new Headers(values);

describe("client-side pacing (rule 4)", () => {
  it("lets a burst of 20 through at once, then one request per 250 ms", () => {
    const pacer = new Pacer(new FakeClock());
    const waits = Array.from({ length: 23 }, () => pacer.reserve());
    expect(waits.slice(0, 20)).toEqual(Array(20).fill(0));
    expect(waits.slice(20)).toEqual([250, 500, 750]);
  });

  it("refills at 4 per second up to the burst and no further", () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    for (let i = 0; i < 20; i++) pacer.reserve();
    expect(pacer.available()).toBe(0);
    clock.advance(1000);
    expect(pacer.available()).toBe(4);
    clock.advance(60_000);
    expect(pacer.available()).toBe(20);
  });

  it("take() sleeps exactly as long as the bucket owes", async () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock, { burst: 2, perSecond: 4 });
    for (let i = 0; i < 5; i++) await pacer.take();
    // Each sleep moves the fake clock, which refills the bucket: one request every 250 ms after the burst.
    expect(clock.sleeps).toEqual([250, 250, 250]);
  });

  it("follows RateLimit-Policy and never holds more than RateLimit says remain", () => {
    const clock = new FakeClock();
    const pacer = new Pacer(clock);
    pacer.update(headers({ "ratelimit-policy": '"default";q=10;w=5', ratelimit: '"default";r=3;t=1' }));
    expect(pacer.currentPolicy).toEqual({ burst: 10, perSecond: 2 });
    expect(pacer.available()).toBe(3);
    expect([pacer.reserve(), pacer.reserve(), pacer.reserve(), pacer.reserve()]).toEqual([0, 0, 0, 500]);
    // Another process using the same client: the server says none remain although we think 2 would.
    clock.advance(1500);
    pacer.update(headers({ ratelimit: '"default";r=0;t=1' }));
    expect(pacer.reserve()).toBe(500);
  });

  it("ignores headers it cannot read, and a larger server count does not add tokens", () => {
    const pacer = new Pacer(new FakeClock());
    for (let i = 0; i < 15; i++) pacer.reserve();
    pacer.update(headers({ "ratelimit-policy": "garbage", ratelimit: '"default";r=19;t=0' }));
    expect(pacer.currentPolicy).toEqual({ burst: 20, perSecond: 4 });
    expect(pacer.available()).toBe(5);
  });
});
