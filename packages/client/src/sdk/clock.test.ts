import { describe, expect, it } from "vitest";
import { FakeClock, HeldClock, systemClock, untilAborted } from "./clock.ts";

describe("a wait that a signal ends", () => {
  it("the system clock's sleep rejects with the signal's reason as soon as it fires", async () => {
    const controller = new AbortController();
    // An hour: were the sleep not abortable, this test would run into vitest's timeout and fail.
    const sleeping = systemClock.sleep(3_600_000, controller.signal);
    const reason = new Error("stopping");
    controller.abort(reason);
    await expect(sleeping).rejects.toBe(reason);
    await expect(systemClock.sleep(3_600_000, controller.signal)).rejects.toBe(reason);
  });

  it("the system clock's sleep rejects with an AbortError, as fetch does, when the signal has no reason", async () => {
    const controller = new AbortController();
    const sleeping = systemClock.sleep(3_600_000, controller.signal);
    controller.abort();
    const error = await sleeping.catch((e) => e);
    expect(error).toBe(controller.signal.reason);
    expect(error).toMatchObject({ name: "AbortError" });
  });

  it("the fake clock neither sleeps nor moves once the signal has fired", async () => {
    const clock = new FakeClock();
    const before = clock.now();
    const controller = new AbortController();
    controller.abort();
    await expect(clock.sleep(1000, controller.signal)).rejects.toMatchObject({ name: "AbortError" });
    expect(clock.sleeps).toEqual([]);
    expect(clock.now()).toBe(before);
  });

  it("the held clock keeps a sleep until released, or until its signal fires", async () => {
    const clock = new HeldClock();
    const before = clock.now();
    let ended = false;
    const first = clock.sleep(500).then(() => {
      ended = true;
    });
    await clock.held();
    expect(ended).toBe(false);
    clock.release();
    await first;
    expect(clock.now()).toBe(before + 500);

    const controller = new AbortController();
    const second = clock.sleep(700, controller.signal);
    await clock.held();
    controller.abort();
    await expect(second).rejects.toMatchObject({ name: "AbortError" });
    expect(clock.sleeps).toEqual([500, 700]);
    expect(clock.now()).toBe(before + 500);
  });

  it("untilAborted stops waiting at the abort and leaves the work to finish, its failure handled", async () => {
    let fail: (error: Error) => void = () => {};
    const work = new Promise<string>((_, reject) => {
      fail = reject;
    });
    const controller = new AbortController();
    const waiting = untilAborted(work, controller.signal);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
    // Rejected after nobody waits, and no handler of the test's own: were it unhandled, vitest would report
    // the unhandled rejection and fail the run.
    fail(new Error("late"));
    const aborted = new AbortController();
    aborted.abort();
    await expect(untilAborted(Promise.reject(new Error("late too")), aborted.signal)).rejects.toMatchObject({
      name: "AbortError",
    });

    const done = new AbortController();
    await expect(untilAborted(Promise.resolve("answer"), done.signal)).resolves.toBe("answer");
    await expect(untilAborted(Promise.resolve("answer"), undefined)).resolves.toBe("answer");
  });
});
