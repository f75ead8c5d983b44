import type { BenchResult } from "./types.ts";

/** What a benchmark measured and says about it; benchResult adds the run's times and whether it met its targets. */
export type Measured = Omit<BenchResult, "quick" | "startedAt" | "elapsedSeconds" | "met"> & {
  /** Given when a benchmark has targets besides its ratios (web.bench.ts: absolute times and sizes). */
  met?: boolean;
};

/**
 * A benchmark's result: what it measured, stamped with when the run started, how long it took (to a tenth of a
 * second), and whether it met its targets: unless the benchmark says, whether every ratio met its target (one
 * without a target always does: types.ts `ratio`).
 */
export function benchResult(quick: boolean, startedAt: Date, measured: Measured): BenchResult {
  return {
    ...measured,
    quick,
    startedAt: startedAt.toISOString(),
    elapsedSeconds: Math.round((Date.now() - startedAt.getTime()) / 100) / 10,
    met: measured.met ?? measured.ratios.every((ratio) => ratio.met),
  };
}

/** The result of a benchmark that could not run here (what it needs is missing): nothing measured, and why. */
export function notRun(
  quick: boolean,
  startedAt: Date,
  bench: { name: string; description: string },
  why: string,
): BenchResult {
  return benchResult(quick, startedAt, {
    ...bench,
    environment: { node: process.version },
    rows: [],
    ratios: [],
    notes: [`WARNING: not run: ${why}`],
  });
}
