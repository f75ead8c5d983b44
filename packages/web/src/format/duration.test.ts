import { describe, expect, it } from "vitest";
import { formatDuration, runDuration } from "./duration.ts";

describe("durations as people read them", () => {
  it.each([
    [850, "850 ms"],
    [4_240, "4.2 s"],
    [12_400, "12 s"],
    [42_000, "42 s"],
    [185_000, "3 m 05 s"],
    [3_720_000, "1 h 02 m"],
  ])("%i ms is %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });

  it("measures a finished run start to end, a running one to now, a queued one not at all", () => {
    const start = "2026-11-24T10:00:00Z";
    expect(runDuration(start, "2026-11-24T10:01:30Z")).toBe(90_000);
    expect(runDuration(start, null, Date.parse("2026-11-24T10:00:05Z"))).toBe(5_000);
    expect(runDuration(null, null)).toBeUndefined();
  });
});
