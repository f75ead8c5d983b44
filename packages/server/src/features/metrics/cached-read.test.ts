import { describe, expect, it } from "vitest";
import { CachedRead } from "./cached-read.ts";

describe("CachedRead", () => {
  it("reads once for every ask within the time to live, and again after it", async () => {
    let now = 0;
    let reads = 0;
    const cached = new CachedRead(
      async () => ++reads,
      1000,
      () => now,
    );
    expect(await Promise.all([cached.get(), cached.get()])).toEqual([1, 1]);
    now = 999;
    expect(await cached.get()).toBe(1);
    now = 1000;
    expect(await cached.get()).toBe(2);
    expect(reads).toBe(2);
  });

  it("keeps no failed read: the next ask reads again", async () => {
    let fail = true;
    let reads = 0;
    const cached = new CachedRead(
      async () => {
        reads++;
        if (fail) throw new Error("database away");
        return "back";
      },
      1000,
      () => 0,
    );
    await expect(cached.get()).rejects.toThrow("database away");
    fail = false;
    expect(await cached.get()).toBe("back");
    expect(reads).toBe(2);
  });
});
