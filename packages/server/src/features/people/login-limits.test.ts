import { describe, expect, it } from "vitest";
import { gcra } from "../ratelimit/gcra.ts";
import { failureCount } from "./login-limits.ts";

/** A bucket driven the way the sign-in route drives it: probe first, charge on failure. */
function bucket(failures: number, windowSeconds: number) {
  const count = failureCount("test", failures, windowSeconds);
  let tat: number | undefined;
  return {
    probe(now: number) {
      const result = gcra(count.probe, now, tat);
      tat = result.tat;
      return result.decision;
    },
    fail(now: number) {
      const result = gcra(count.fail, now, tat);
      tat = result.tat;
      return result.decision;
    },
  };
}

describe("failureCount", () => {
  it("admits N failures, then refuses the probe until one failure's worth of time has passed", () => {
    const limit = bucket(10, 900);
    const now = 1_000_000;
    for (let i = 0; i < 10; i++) {
      expect(limit.probe(now).allowed).toBe(true);
      expect(limit.fail(now).allowed).toBe(true);
    }
    const refused = limit.probe(now);
    expect(refused.allowed).toBe(false);
    // One failure is regained every 90 s (less the slack); the refusal says to come back then.
    expect(refused.retryAfterMs).toBeGreaterThan(80_000);
    expect(refused.retryAfterMs).toBeLessThanOrEqual(90_000);
    expect(limit.probe(now + 80_000).allowed).toBe(false);
    expect(limit.probe(now + 82_000).allowed).toBe(true);
  });

  it("barely counts successful probes: ninety between failures cost less than one", () => {
    const limit = bucket(10, 900);
    const now = 5_000_000;
    for (let i = 0; i < 9; i++) limit.fail(now);
    for (let i = 0; i < 90; i++) expect(limit.probe(now).allowed).toBe(true);
    expect(limit.fail(now).allowed).toBe(true);
    expect(limit.probe(now).allowed).toBe(false);
  });

  it("forgets failures after the window", () => {
    const limit = bucket(3, 60);
    for (let i = 0; i < 3; i++) limit.fail(0);
    expect(limit.probe(0).allowed).toBe(false);
    expect(limit.probe(60_001).allowed).toBe(true);
    expect(limit.fail(60_001).allowed).toBe(true);
    for (let i = 0; i < 2; i++) expect(limit.fail(60_001).allowed).toBe(true);
    expect(limit.probe(60_001).allowed).toBe(false);
  });
});
