import { UsageError } from "./exit-codes.ts";

const units: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** `90s`, `60m`, `1h30m`, `1500ms`; a bare number is seconds. Returns milliseconds. */
export function parseDuration(text: string): number {
  const value = text.trim();
  if (/^\d+$/.test(value)) return Number(value) * 1000;
  const parts = [...value.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)];
  if (parts.length === 0 || parts.map((p) => p[0]).join("") !== value) {
    throw new UsageError(`"${text}" is not a duration: write it like 90s, 60m, 1h30m or 1500ms.`);
  }
  return Math.round(
    parts.reduce((sum, [, amount, unit]) => sum + Number(amount) * (units[unit ?? "s"] ?? 0), 0),
  );
}

/** Milliseconds as a short human duration: 850ms, 12s, 3m05s, 1h02m. */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${String(seconds % 60).padStart(2, "0")}s`;
  return `${Math.floor(minutes / 60)}h${String(minutes % 60).padStart(2, "0")}m`;
}
