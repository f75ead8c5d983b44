import { describe, expect, it } from "vitest";
import { newId, timeOfId } from "./ids.ts";

describe("newId", () => {
  it("makes prefixed IDs that sort by time and carry it", () => {
    const early = newId("ex", Date.parse("2026-01-01T00:00:00Z"));
    const late = newId("ex", Date.parse("2026-01-01T00:00:00.001Z"));
    expect(early).toMatch(/^ex_[0-9A-HJKMNP-TV-Z]{26}$/);
    expect(early < late).toBe(true);
    expect(timeOfId(early)).toBe(Date.parse("2026-01-01T00:00:00Z"));
  });

  it("does not repeat within one millisecond", () => {
    const ids = new Set(Array.from({ length: 1000 }, () => newId("tp", 0)));
    expect(ids.size).toBe(1000);
  });

  it("reads no time from what it did not make", () => {
    expect(timeOfId("blob_short")).toBe(Number.POSITIVE_INFINITY);
    expect(timeOfId("x_!!!!!!!!!!!!!!!!!!!!!!!!!!")).toBe(Number.POSITIVE_INFINITY);
  });
});
