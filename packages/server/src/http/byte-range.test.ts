import { describe, expect, it } from "vitest";
import { parseRange } from "./byte-range.ts";

describe("parseRange", () => {
  it("serves a first-last range, clamping the end to the object", () => {
    expect(parseRange("bytes=0-99", 1000)).toEqual({ kind: "partial", range: { start: 0, end: 99 } });
    expect(parseRange("bytes=900-5000", 1000)).toEqual({ kind: "partial", range: { start: 900, end: 999 } });
  });

  it("serves open-ended and suffix ranges", () => {
    expect(parseRange("bytes=10-", 1000)).toEqual({ kind: "partial", range: { start: 10, end: 999 } });
    expect(parseRange("bytes=-100", 1000)).toEqual({ kind: "partial", range: { start: 900, end: 999 } });
    expect(parseRange("bytes=-5000", 1000)).toEqual({ kind: "partial", range: { start: 0, end: 999 } });
  });

  it("says unsatisfiable for a start past the end or an empty suffix", () => {
    expect(parseRange("bytes=1000-", 1000)).toEqual({ kind: "unsatisfiable" });
    expect(parseRange("bytes=-0", 1000)).toEqual({ kind: "unsatisfiable" });
  });

  it("falls back to the whole object for what it does not serve", () => {
    for (const header of [undefined, "", "bytes=0-1,5-6", "items=0-1", "bytes=5-2", "bytes=-", "bytes=abc"]) {
      expect(parseRange(header, 1000)).toEqual({ kind: "full" });
    }
  });
});
