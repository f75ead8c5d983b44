import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "./duration.ts";
import { UsageError } from "./exit-codes.ts";

describe("durations", () => {
  it("reads 90s, 60m, 1h30m, 1500ms and bare seconds", () => {
    expect(parseDuration("90s")).toBe(90_000);
    expect(parseDuration("60m")).toBe(3_600_000);
    expect(parseDuration("1h30m")).toBe(5_400_000);
    expect(parseDuration("1500ms")).toBe(1500);
    expect(parseDuration("45")).toBe(45_000);
  });

  it("refuses anything else as a usage error", () => {
    for (const text of ["", "soon", "10 m", "5d", "m10"])
      expect(() => parseDuration(text), text).toThrow(UsageError);
  });

  it("prints short human durations", () => {
    expect([850, 12_000, 185_000, 3_720_000].map(formatDuration)).toEqual(["850ms", "12s", "3m05s", "1h02m"]);
  });
});
