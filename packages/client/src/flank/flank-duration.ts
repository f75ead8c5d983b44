/**
 * Flank's durations (`timeout: 45m`, `run-timeout: 1h`, `shard-time: 120`): a number with h, m or s, or bare
 * seconds, as gcloud's --timeout reads them. Undefined when the text is none of those.
 */
export function flankSeconds(value: unknown): number | undefined {
  if (typeof value === "number" && Number.isFinite(value)) return value;
  if (typeof value !== "string") return undefined;
  const match = /^\s*(-?\d+(?:\.\d+)?)\s*([hms]?)\s*$/i.exec(value);
  if (!match) return undefined;
  const amount = Number(match[1]);
  const unit = (match[2] ?? "").toLowerCase();
  return amount * (unit === "h" ? 3600 : unit === "m" ? 60 : 1);
}
