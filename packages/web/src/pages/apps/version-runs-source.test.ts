import { describe, expect, it } from "vitest";
import type { Execution } from "../../api/types.ts";
import { mergeRuns, runsFromApp } from "./version-runs-source.ts";

const run = (id: string, version: string, minute: number) =>
  ({ id, version, created_at: `2026-11-24T10:${String(minute).padStart(2, "0")}:00.000Z` }) as Execution;

const newest = [
  run("ex_6", "2.0", 50),
  run("ex_5", "1.9", 40),
  run("ex_4", "2.0", 30),
  run("ex_3", "1.9", 20),
];

describe("a version's runs, from the app's newest runs", () => {
  it("waits for the app's runs", () => {
    expect(runsFromApp({ items: undefined, more: false }, "2.0", 5)).toBeUndefined();
  });

  it("takes them as they are when the app has no older runs: a version missing from them has none", () => {
    expect(runsFromApp({ items: newest, more: false }, "2.0", 5)).toEqual({
      runs: [newest[0], newest[2]],
      complete: true,
    });
    expect(runsFromApp({ items: newest, more: false }, "1.0", 5)).toEqual({ runs: [], complete: true });
  });

  it("asks for the version's own when the app has older runs and too few of this version are among the newest", () => {
    expect(runsFromApp({ items: newest, more: true }, "2.0", 5)?.complete).toBe(false);
    expect(runsFromApp({ items: newest, more: true }, "1.0", 5)?.complete).toBe(false);
    // Enough of them among the newest: nothing older would be shown anyway.
    expect(runsFromApp({ items: newest, more: true }, "2.0", 2)?.complete).toBe(true);
  });

  it("merges the version's own runs in: newest first, each once, the app's (live) copy kept", () => {
    const fresh = { ...run("ex_4", "2.0", 30), status: "passed" } as Execution;
    const stale = { ...run("ex_4", "2.0", 30), status: "running" } as Execution;
    const older = [stale, run("ex_2", "2.0", 10), run("ex_1", "2.0", 5)];
    expect(mergeRuns([newest[0] as Execution, fresh], older)).toEqual([newest[0], fresh, older[1], older[2]]);
  });
});
