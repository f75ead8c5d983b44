import { describe, expect, it } from "vitest";
import { newLineGroups } from "./log-store.ts";

const lines = (...seqs: number[]) => seqs.map((seq) => ({ seq, at: "t", stream: "stdout", line: `${seq}` }));
const seqsOf = (groups: ReturnType<typeof newLineGroups>) => groups.map((g) => g.map((e) => e.seq));

describe("newLineGroups", () => {
  it("keeps a batch whole when nothing of it is stored", () => {
    expect(seqsOf(newLineGroups(lines(0, 1, 3), []))).toEqual([[0, 1, 3]]);
  });

  it("drops a batch stored already, and the stored part of a batch resent with newer lines", () => {
    expect(seqsOf(newLineGroups(lines(0, 1, 2), [{ first_seq: 0, last_seq: 2 }]))).toEqual([]);
    expect(seqsOf(newLineGroups(lines(0, 1, 2, 3, 4), [{ first_seq: 0, last_seq: 2 }]))).toEqual([[3, 4]]);
  });

  it("treats every seq inside a stored range as stored, also one that range did not hold", () => {
    expect(seqsOf(newLineGroups(lines(1, 3, 5), [{ first_seq: 0, last_seq: 4 }]))).toEqual([[5]]);
  });

  it("splits around stored ranges so that no new chunk straddles one", () => {
    const stored = [
      { first_seq: 3, last_seq: 4 },
      { first_seq: 7, last_seq: 7 },
    ];
    expect(seqsOf(newLineGroups(lines(1, 2, 3, 5, 6, 7, 8), stored))).toEqual([[1, 2], [5, 6], [8]]);
  });

  it("keeps the first of lines sent twice in one batch", () => {
    const batch = [...lines(0, 1), { seq: 1, at: "t", stream: "stdout", line: "again" }];
    expect(
      newLineGroups(batch, [])
        .flat()
        .map((e) => e.line),
    ).toEqual(["0", "1"]);
  });
});
