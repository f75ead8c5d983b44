import { describe, expect, it } from "vitest";
import { CoalescedRound } from "./coalesced-round.ts";

/** A round the test ends by hand, counting how many started and how many ran at once. */
function gatedRounds() {
  const gates: Array<() => void> = [];
  let started = 0;
  let running = 0;
  let mostAtOnce = 0;
  const round = async () => {
    started++;
    running++;
    mostAtOnce = Math.max(mostAtOnce, running);
    await new Promise<void>((resolve) => gates.push(resolve));
    running--;
  };
  return {
    round,
    started: () => started,
    mostAtOnce: () => mostAtOnce,
    /** Ends the round running now (waits for it to have started). */
    async finish() {
      while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
      gates.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    },
  };
}

describe("CoalescedRound", () => {
  it("runs at once when idle, and a burst of asks during a round makes exactly one more round", async () => {
    const gated = gatedRounds();
    const rounds = new CoalescedRound(gated.round, (error) => {
      throw error;
    });
    const first = rounds.run();
    expect(gated.started()).toBe(1);
    for (let i = 0; i < 10; i++) rounds.wake();
    const second = rounds.run();
    await gated.finish();
    await first;
    expect(gated.started()).toBe(2);
    await gated.finish();
    await second;
    await rounds.idle();
    expect(gated.started()).toBe(2);
    expect(gated.mostAtOnce()).toBe(1);
  });

  it("runs the queued round after a failed one, and hands a woken round's failure to onError", async () => {
    const errors: unknown[] = [];
    let calls = 0;
    const rounds = new CoalescedRound(
      async () => {
        calls++;
        if (calls === 1) throw new Error("database away");
      },
      (error) => errors.push(error),
    );
    const first = rounds.run();
    rounds.wake();
    await expect(first).rejects.toThrow("database away");
    await rounds.idle();
    expect(calls).toBe(2);
    expect(errors).toEqual([]);

    calls = 0;
    rounds.wake();
    await rounds.idle();
    expect(errors).toEqual([new Error("database away")]);
  });

  it("holds a round woken within the gap until the gap has passed, one round for the whole burst", async () => {
    let started = 0;
    const rounds = new CoalescedRound(
      async () => {
        started++;
      },
      (error) => {
        throw error;
      },
      50,
    );
    rounds.wake();
    expect(started).toBe(1);
    await rounds.idle();
    for (let i = 0; i < 10; i++) rounds.wake();
    expect(started).toBe(1);
    await rounds.idle();
    expect(started).toBe(2);

    // After a quiet spell longer than the gap, a signal starts a round at once.
    await new Promise((resolve) => setTimeout(resolve, 60));
    rounds.wake();
    expect(started).toBe(3);
    await rounds.idle();
  });
});
