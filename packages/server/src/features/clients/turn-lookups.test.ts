import { setImmediate as nextTurn } from "node:timers/promises";
import { describe, expect, it } from "vitest";
import { TurnLookups } from "./turn-lookups.ts";

/** A store whose reads are counted, and whose value the test changes between turns. */
function countingStore(initial: Record<string, string>) {
  const values = new Map(Object.entries(initial));
  const reads: string[] = [];
  const lookups = new TurnLookups(async (key: string) => {
    reads.push(key);
    return values.get(key);
  });
  return { values, reads, lookups };
}

describe("TurnLookups", () => {
  it("reads each key once for all the callers of one turn", async () => {
    const { reads, lookups } = countingStore({ a: "A", b: "B" });
    const results = await Promise.all([
      lookups.get("a"),
      lookups.get("a"),
      lookups.get("b"),
      lookups.get("a"),
    ]);
    expect(results).toEqual(["A", "A", "B", "A"]);
    expect(reads).toEqual(["a", "b"]);
  });

  it("reads only after the turn's callers have all asked, so a change made before a call is always seen", async () => {
    const { values, reads, lookups } = countingStore({ a: "enabled" });
    const first = lookups.get("a");
    values.set("a", "disabled"); // committed after the first call but before the read
    const second = lookups.get("a");
    expect(reads).toEqual([]); // nothing read yet: the read waits for the end of the turn
    expect(await first).toBe("disabled");
    expect(await second).toBe("disabled");
  });

  it("never serves a result to a caller of a later turn", async () => {
    const { values, reads, lookups } = countingStore({ a: "enabled" });
    expect(await lookups.get("a")).toBe("enabled");
    values.set("a", "disabled");
    await nextTurn();
    expect(await lookups.get("a")).toBe("disabled");
    expect(reads).toEqual(["a", "a"]);
  });

  it("does not share a read that began before the call, even one still in flight", async () => {
    let stored = "enabled";
    let release: () => void = () => {};
    let reads = 0;
    const lookups = new TurnLookups(async (_key: string) => {
      const seen = stored;
      if (++reads === 1) await new Promise<void>((resolve) => (release = resolve));
      return seen;
    });
    const early = lookups.get("a");
    await nextTurn(); // the first read has begun and is still in flight (a slow PostgreSQL query)
    stored = "disabled";
    const late = lookups.get("a");
    await nextTurn();
    release();
    expect(await early).toBe("enabled");
    expect(await late).toBe("disabled");
    expect(reads).toBe(2);
  });

  it("gives every caller of the turn the read's failure, and recovers on the next turn", async () => {
    let fail = true;
    const lookups = new TurnLookups(async (key: string) => {
      if (fail) throw new Error(`database down while reading ${key}`);
      return key;
    });
    const results = await Promise.allSettled([lookups.get("a"), lookups.get("a")]);
    expect(results.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    fail = false;
    expect(await lookups.get("a")).toBe("a");
  });

  it("turns a read that throws synchronously into a rejection", async () => {
    const lookups = new TurnLookups((key: string): Promise<string> => {
      throw new Error(`no ${key}`);
    });
    await expect(lookups.get("a")).rejects.toThrow("no a");
  });
});
