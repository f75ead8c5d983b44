import { describe, expect, it } from "vitest";
import { type Clock, FakeClock, HeldClock, seededRandom } from "./clock.ts";
import { TestbayApiError, TestbayGaveUpError } from "./errors.ts";
import {
  type AttemptOutcome,
  backoffMs,
  isRetryableStatus,
  mayRetryNetworkError,
  parseRetryAfter,
  RetryPolicy,
} from "./retry-policy.ts";

const rateLimited = () =>
  new TestbayApiError({ status: 429, problem: { code: "rate_limited" }, method: "GET", path: "/apps" });

/** An attempt function that fails with `failures` retryable outcomes, then succeeds; counts its calls. */
function scripted(failures: AttemptOutcome<string>[]) {
  const calls: number[] = [];
  return {
    calls,
    attempt: async (n: number): Promise<AttemptOutcome<string>> => {
      calls.push(n);
      return failures[n] ?? { done: "ok" };
    },
  };
}

describe("which failures are retried (rule 2)", () => {
  it("retries 429, 502, 503 and 504 and never 400, 401, 403, 404, 409, 413, 422 or 500", () => {
    for (const status of [429, 502, 503, 504]) expect(isRetryableStatus(status), `${status}`).toBe(true);
    for (const status of [400, 401, 403, 404, 409, 413, 422, 500]) {
      expect(isRetryableStatus(status), `${status}`).toBe(false);
    }
  });

  it("resends after a network error only idempotent methods or requests with an Idempotency-Key", () => {
    for (const method of ["GET", "HEAD", "PUT", "DELETE", "get"]) {
      expect(mayRetryNetworkError(method, false), method).toBe(true);
    }
    for (const method of ["POST", "PATCH"]) expect(mayRetryNetworkError(method, false), method).toBe(false);
    expect(mayRetryNetworkError("POST", true)).toBe(true);
  });

  it("reads Retry-After as seconds or as an HTTP date, and ignores what it cannot read", () => {
    const now = Date.parse("2026-01-01T00:00:00Z");
    expect(parseRetryAfter("3", now)).toBe(3000);
    expect(parseRetryAfter("Thu, 01 Jan 2026 00:00:10 GMT", now)).toBe(10_000);
    expect(parseRetryAfter("soon", now)).toBeUndefined();
    expect(parseRetryAfter(null, now)).toBeUndefined();
  });
});

describe("backoff (rule 3)", () => {
  it("is full jitter: random(0, min(30 s, 500 ms · 2^attempt)), exact for a seeded source", () => {
    const random = seededRandom(42);
    const delays = [0, 1, 2, 3, 4, 5, 6, 7].map((n) => backoffMs(n, random, { baseMs: 500, capMs: 30_000 }));
    expect(delays).toEqual([300, 448, 1704, 2678, 1398, 8425, 8196, 18742]);
    // The ceiling doubles from 500 ms and stops at the 30 s cap.
    const top = () => 0.999_999;
    expect([0, 1, 2, 5, 6, 10].map((n) => backoffMs(n, top, { baseMs: 500, capMs: 30_000 }))).toEqual([
      499, 999, 1999, 15_999, 29_999, 29_999,
    ]);
  });

  it("waits the seeded delays between attempts and succeeds on the attempt after them", async () => {
    const clock = new FakeClock();
    const policy = new RetryPolicy({}, clock, seededRandom(7));
    const script = scripted([{ retry: rateLimited() }, { retry: rateLimited() }, { retry: rateLimited() }]);
    await expect(policy.run({ method: "GET", path: "/apps" }, script.attempt)).resolves.toBe("ok");
    expect(script.calls).toEqual([0, 1, 2, 3]);
    expect(clock.sleeps).toEqual([5, 61, 1953]);
  });

  it("makes at most 6 attempts, then gives up with the last failure", async () => {
    const clock = new FakeClock();
    const policy = new RetryPolicy({}, clock, seededRandom(7));
    const script = scripted(Array.from({ length: 10 }, () => ({ retry: rateLimited() })));
    const error = await policy.run({ method: "GET", path: "/apps" }, script.attempt).catch((e) => e);
    expect(error).toBeInstanceOf(TestbayGaveUpError);
    expect(error).toMatchObject({ attempts: 6, why: "attempts" });
    expect(error.lastError.status).toBe(429);
    expect(script.calls).toHaveLength(6);
    expect(clock.sleeps).toEqual([5, 61, 1953, 2796, 4171]);
  });

  it("honours Retry-After as the least wait, and keeps a longer jittered wait", async () => {
    const clock = new FakeClock();
    const policy = new RetryPolicy({}, clock, () => 0.5);
    const script = scripted([
      { retry: rateLimited(), retryAfterMs: 3000 }, // jitter 250 ms < 3 s: waits 3 s
      { retry: rateLimited(), retryAfterMs: 0 }, // jitter 500 ms
      { retry: rateLimited(), retryAfterMs: 1000 }, // jitter 1000 ms = Retry-After
      { retry: rateLimited(), retryAfterMs: 1000 }, // jitter 2000 ms > Retry-After: the jitter wins
    ]);
    await policy.run({ method: "GET", path: "/apps" }, script.attempt);
    expect(clock.sleeps).toEqual([3000, 500, 1000, 2000]);
  });

  it("stops at the overall deadline instead of waiting past it", async () => {
    const clock = new FakeClock();
    const policy = new RetryPolicy({ deadlineMs: 10_000 }, clock, () => 0.5);
    const script = scripted([
      { retry: rateLimited(), retryAfterMs: 4000 },
      { retry: rateLimited(), retryAfterMs: 4000 },
      { retry: rateLimited(), retryAfterMs: 4000 }, // 8 s gone: another 4 s would pass the 10 s deadline
    ]);
    const error = await policy.run({ method: "GET", path: "/apps" }, script.attempt).catch((e) => e);
    expect(error).toBeInstanceOf(TestbayGaveUpError);
    expect(error).toMatchObject({ attempts: 3, why: "deadline" });
    expect(clock.sleeps).toEqual([4000, 4000]);
  });

  it("takes a caller's earlier deadline (a --timeout) over its own budget", async () => {
    const clock = new FakeClock();
    const policy = new RetryPolicy({}, clock, () => 0.5);
    const script = scripted([{ retry: rateLimited(), retryAfterMs: 2000 }]);
    const deadlineAt = clock.now() + 1000;
    const error = await policy
      .run({ method: "GET", path: "/apps", deadlineAt }, script.attempt)
      .catch((e) => e);
    expect(error).toMatchObject({ attempts: 1, why: "deadline" });
    expect(clock.sleeps).toEqual([]);
  });

  it("does not retry what the attempt throws (a non-retryable refusal)", async () => {
    const clock = new FakeClock();
    const policy = new RetryPolicy({}, clock, () => 0.5);
    let calls = 0;
    const refusal = new TestbayApiError({ status: 404, problem: {}, method: "GET", path: "/x" });
    await expect(
      policy.run({ method: "GET", path: "/x" }, async () => {
        calls += 1;
        throw refusal;
      }),
    ).rejects.toBe(refusal);
    expect(calls).toBe(1);
    expect(clock.sleeps).toEqual([]);
  });
});

describe("a call's signal ends its retries", () => {
  const unavailable = () =>
    new TestbayApiError({
      status: 503,
      problem: { error: "Service Unavailable", statusCode: 503 },
      method: "POST",
      path: "/agent/claim",
    });
  const always503 = () => scripted(Array.from({ length: 10 }, () => ({ retry: unavailable() })));

  it("ends a backoff wait at once with the signal's reason, and makes no attempt after it", async () => {
    const clock = new HeldClock();
    const policy = new RetryPolicy({}, clock, () => 0.5);
    const script = always503();
    const controller = new AbortController();
    const call = policy.run(
      { method: "POST", path: "/agent/claim", signal: controller.signal },
      script.attempt,
    );
    await clock.held();
    clock.release(); // the first wait ends as time passes: a second attempt follows
    await clock.held();
    expect(script.calls).toEqual([0, 1]);
    const reason = new Error("agent stopping");
    controller.abort(reason);
    await expect(call).rejects.toBe(reason);
    clock.release();
    expect(script.calls).toEqual([0, 1]);
    expect(clock.sleeps).toEqual([250, 500]);
  });

  it("ends the wait also on a clock that does not heed the signal", async () => {
    let sleeping: () => void = () => {};
    const asleep = new Promise<void>((resolve) => {
      sleeping = resolve;
    });
    const clock: Clock = {
      now: () => 0,
      sleep: () => {
        sleeping();
        return new Promise<void>(() => {}); // never ends by itself
      },
    };
    const policy = new RetryPolicy({}, clock, () => 0.5);
    const script = always503();
    const controller = new AbortController();
    const call = policy.run(
      { method: "POST", path: "/agent/claim", signal: controller.signal },
      script.attempt,
    );
    await asleep;
    controller.abort();
    const error = await call.catch((e) => e);
    expect(error).toBe(controller.signal.reason);
    expect(error).toMatchObject({ name: "AbortError" });
    expect(script.calls).toEqual([0]);
  });

  it("reports the abort, not TestbayGaveUpError, when the signal fired during the last attempt", async () => {
    const clock = new FakeClock();
    const policy = new RetryPolicy({ maxAttempts: 2 }, clock, () => 0.5);
    const controller = new AbortController();
    const calls: number[] = [];
    const error = await policy
      .run({ method: "POST", path: "/agent/claim", signal: controller.signal }, async (n) => {
        calls.push(n);
        if (n === 1) controller.abort(); // the 503 arrives as the caller gives up
        return { retry: unavailable() };
      })
      .catch((e) => e);
    expect(error).not.toBeInstanceOf(TestbayGaveUpError);
    expect(error).toBe(controller.signal.reason);
    expect(calls).toEqual([0, 1]);
    expect(clock.sleeps).toEqual([250]);
  });

  it("makes no attempt at all when the signal has already fired", async () => {
    const clock = new FakeClock();
    const policy = new RetryPolicy({}, clock, () => 0.5);
    const script = always503();
    const controller = new AbortController();
    controller.abort();
    await expect(
      policy.run({ method: "GET", path: "/me", signal: controller.signal }, script.attempt),
    ).rejects.toMatchObject({ name: "AbortError" });
    expect(script.calls).toEqual([]);
  });

  it("does not change a call whose signal never fires", async () => {
    const clock = new FakeClock();
    const policy = new RetryPolicy({}, clock, seededRandom(7));
    const script = scripted([{ retry: rateLimited() }, { retry: rateLimited() }]);
    const controller = new AbortController();
    await expect(
      policy.run({ method: "GET", path: "/apps", signal: controller.signal }, script.attempt),
    ).resolves.toBe("ok");
    expect(script.calls).toEqual([0, 1, 2]);
    expect(clock.sleeps).toEqual([5, 61]);
  });
});
