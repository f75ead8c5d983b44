/**
 * The shape every benchmark reports in. A benchmark measures a subject against a baseline in the same run
 * (machines are noisy; absolute numbers from different runs do not compare), so its headline is a ratio.
 */

/** One measured number, as shown in a table cell. */
export interface Metric {
  label: string;
  value: number;
  unit: string;
  /** Decimals to print; 0 unless told. */
  decimals?: number;
}

/** One line of the result table: a server, a variant, a code path. */
export interface Row {
  label: string;
  metrics: Metric[];
  /** Free text shown last, e.g. the value of each round. */
  detail?: string;
}

/** A table of its own: rows that do not share the columns of the main table. */
export interface Section {
  title: string;
  rows: Row[];
  detailLabel?: string;
}

export interface Target {
  op: ">=" | "<=";
  value: number;
}

/** `value` = subject ÷ baseline. Without a target the ratio is informational and always met. */
export interface Ratio {
  label: string;
  value: number;
  target?: Target;
  met: boolean;
  /** The same ratio round by round, to judge the noise. */
  perRound?: number[];
}

export interface BenchResult {
  name: string;
  description: string;
  /** A short run (`--quick`): checks that the harness works; its numbers are not worth quoting. */
  quick: boolean;
  startedAt: string;
  elapsedSeconds: number;
  environment: Record<string, string | number>;
  rows: Row[];
  /** Header of the rows' `detail` column. */
  detailLabel?: string;
  /** Further tables, with columns of their own, printed after `rows`. */
  sections?: Section[];
  ratios: Ratio[];
  /** How it was measured and anything that qualifies the numbers: printed under the tables. */
  notes: string[];
  /** Every ratio met its target. */
  met: boolean;
  /** Raw measurements, for the JSON file only. */
  details?: unknown;
}

export interface RunOptions {
  quick: boolean;
  /** Progress for the person watching: goes to stderr, so `--json` output stays clean. */
  log(line: string): void;
}

/** What a `bench/<name>.bench.ts` module exports. */
export interface Benchmark {
  name: string;
  description: string;
  run(options: RunOptions): Promise<BenchResult>;
}

export function ratio(label: string, value: number, target?: Target, perRound?: number[]): Ratio {
  const met = !target || (target.op === ">=" ? value >= target.value : value <= target.value);
  return { label, value, ...(target && { target }), met, ...(perRound && { perRound }) };
}
