/**
 * What a failed simctl call said, for a managed device's `error` (API.md §13: "the tool's last lines of
 * output"): simctl explains on stderr over several lines (the domain and code, then the reason, then an
 * underlying error), so the last few lines are kept rather than one.
 */
import type { ToolResult } from "../../apple/xcrun.ts";

export function simctlTail(what: string, result: ToolResult, lines = 6): string {
  const said = (result.stderr.some((l) => l.trim() !== "") ? result.stderr : result.stdout)
    .map((l) => l.trimEnd())
    .filter((l) => l.trim() !== "");
  const why = result.spawnError
    ? result.spawnError
    : result.timedOut
      ? "timed out"
      : result.exitCode === null
        ? `killed by ${result.signal ?? "a signal"}`
        : `exit code ${result.exitCode}`;
  const tail = said.slice(-lines).join("\n");
  return `xcrun simctl ${what} failed (${why})${tail ? `:\n${tail}` : ""}`.slice(0, 4000);
}
