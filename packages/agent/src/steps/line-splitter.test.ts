import { describe, expect, it } from "vitest";
import { LineSplitter } from "./line-splitter.ts";

function split(chunks: string[], maxChars?: number): string[] {
  const lines: string[] = [];
  const splitter = new LineSplitter((line) => lines.push(line), maxChars);
  for (const chunk of chunks) splitter.push(chunk);
  splitter.end();
  return lines;
}

describe("LineSplitter", () => {
  it("joins lines broken across chunks and keeps empty lines", () => {
    expect(split(["al", "pha\nbe", "ta\n\ngam", "ma\n"])).toEqual(["alpha", "beta", "", "gamma"]);
  });

  it("passes on a last line without a newline at the end", () => {
    expect(split(["one\ntw", "o"])).toEqual(["one", "two"]);
  });

  it("drops the \\r of CRLF line ends", () => {
    expect(split(["a\r\nb\r", "\n"])).toEqual(["a", "b"]);
  });

  it("cuts over-long lines into pieces instead of holding or dropping them", () => {
    expect(split(["abcdefghij\nxy"], 4)).toEqual(["abcd", "efgh", "ij", "xy"]);
    expect(split(["abcdef", "ghij"], 4)).toEqual(["abcd", "efgh", "ij"]);
  });
});
