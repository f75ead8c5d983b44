import type { BenchResult, Metric, Ratio, Row } from "./types.ts";

interface Style {
  bad(text: string): string;
  good(text: string): string;
  dim(text: string): string;
}

const plain: Style = { bad: (t) => t, good: (t) => t, dim: (t) => t };
const ansi: Style = {
  bad: (t) => `\x1b[1;31m${t}\x1b[0m`,
  good: (t) => `\x1b[32m${t}\x1b[0m`,
  dim: (t) => `\x1b[2m${t}\x1b[0m`,
};

export function formatNumber(value: number | undefined, decimals = 0): string {
  if (value === undefined || !Number.isFinite(value)) return "—";
  return value.toLocaleString("en-US", { minimumFractionDigits: decimals, maximumFractionDigits: decimals });
}

/** 24512 → "24.5k": for lists of values where the digits past three only add noise. */
export function formatCompact(value: number): string {
  return Math.abs(value) >= 1000 ? `${(value / 1000).toFixed(1)}k` : value.toFixed(0);
}

function header(metric: Metric): string {
  return metric.unit && metric.unit !== metric.label ? `${metric.label} ${metric.unit}` : metric.label;
}

/** Lays out cells in columns two spaces apart; `right` says which columns are right-aligned. */
function table(cells: string[][], right: (column: number) => boolean): string[] {
  const widths: number[] = [];
  for (const row of cells) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return cells.map((row) =>
    `  ${row.map((cell, i) => (right(i) ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0))).join("  ")}`.trimEnd(),
  );
}

/** Rows of metrics under their column headers (taken from the first row), then the detail column. */
function rowTable(rows: Row[], detailLabel: string | undefined): string[] {
  const columns = rows[0]?.metrics.map(header) ?? [];
  const cells = [
    ["", ...columns, detailLabel ?? ""],
    ...rows.map((row) => [
      row.label,
      ...row.metrics.map((m) => formatNumber(m.value, m.decimals)),
      row.detail ?? "",
    ]),
  ];
  return table(cells, (i) => i > 0 && i <= columns.length);
}

function verdict(ratio: Ratio): string {
  if (!ratio.target) return "";
  if (ratio.met) return "ok";
  return ratio.target.op === ">=" ? "BELOW TARGET" : "ABOVE TARGET";
}

/** The result as a compact human report: the measurements, the ratios with their targets, then the notes. */
export function formatResult(result: BenchResult, color: boolean): string {
  const style = color ? ansi : plain;
  const lines: string[] = [];
  lines.push(`${result.name} — ${result.description}`);
  if (result.quick)
    lines.push(style.dim("(quick run: short durations to check the harness; do not quote these numbers)"));
  lines.push("");

  lines.push(...rowTable(result.rows, result.detailLabel));
  lines.push("");
  for (const section of result.sections ?? []) {
    lines.push(`  ${section.title}`, ...rowTable(section.rows, section.detailLabel), "");
  }

  if (result.ratios.length > 0) {
    const ratioCells = [
      ["ratio", "value", "target", "by round", ""],
      ...result.ratios.map((r) => [
        r.label,
        formatNumber(r.value, 2),
        r.target ? `${r.target.op === ">=" ? "≥" : "≤"} ${formatNumber(r.target.value, 2)}` : "—",
        r.perRound?.map((v) => v.toFixed(2)).join(" ") ?? "",
        verdict(r),
      ]),
    ];
    const laidOut = table(ratioCells, (i) => i === 1 || i === 2);
    lines.push(laidOut[0] as string);
    result.ratios.forEach((r, i) => {
      const line = laidOut[i + 1] as string;
      lines.push(!r.target ? line : r.met ? line.replace(/ok$/, style.good("ok")) : style.bad(line));
    });
    lines.push("");
  }

  for (const note of result.notes) lines.push(`  · ${note}`);
  if (result.notes.length > 0) lines.push("");

  const missed = result.ratios.filter((r) => !r.met);
  const verdicts = [...new Set(missed.map((r) => verdict(r).toLowerCase()))].join(" / ");
  lines.push(
    missed.length === 0
      ? `${result.name}: every target met`
      : style.bad(
          `${result.name}: ${verdicts}: ${missed.map((r) => r.label).join("; ")} (benchmarks report; the exit code stays 0)`,
        ),
  );
  return lines.join("\n");
}
