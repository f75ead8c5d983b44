/** A duration the way people read one: "850 ms", "4.2 s", "12 s", "3 m 05 s", "1 h 02 m". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  const seconds = ms / 1000;
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const whole = Math.round(seconds);
  const [hours, minutes, rest] = [Math.floor(whole / 3600), Math.floor((whole % 3600) / 60), whole % 60];
  const two = (n: number) => String(n).padStart(2, "0");
  return hours > 0 ? `${hours} h ${two(minutes)} m` : `${minutes} m ${two(rest)} s`;
}

/** How long a run took, or has taken so far while it still runs; undefined before it starts. */
export function runDuration(
  startedAt: string | null,
  finishedAt: string | null,
  now = Date.now(),
): number | undefined {
  if (!startedAt) return undefined;
  const end = finishedAt ? Date.parse(finishedAt) : now;
  return Math.max(0, end - Date.parse(startedAt));
}
