/**
 * Why a device-listing tool (adb, xcrun simctl) failed, in the tool's own words, for the agent's log. Node's
 * error message for a failed execFile begins "Command failed: /full/path/adb devices -l", which names the
 * command and not the cause; the tools say what went wrong last on stderr (adb, after its daemon chatter:
 * "adb: failed to check server version: cannot connect to daemon").
 */

/** What execFile rejects with: its output and how the process ended. */
interface ExecFailure {
  name?: string;
  code?: unknown;
  killed?: boolean;
  signal?: string | null;
  stdout?: string | Buffer;
  stderr?: string | Buffer;
}

/**
 * The last thing the tool said (stderr first), or how it ended when it said nothing.
 *
 * @example whyToolFailed(error, 10_000) // "adb: failed to check server version: cannot connect to daemon"
 */
export function whyToolFailed(error: unknown, timeoutMs: number): string {
  const failure = (error ?? {}) as ExecFailure;
  if (failure.name === "AbortError") return "stopped (the agent is stopping)";
  // execFile kills a tool that outlives its timeout with SIGTERM and sets `killed`.
  if (failure.killed) return `no answer within ${seconds(timeoutMs)}`;
  const said = lastLine(failure.stderr) ?? lastLine(failure.stdout);
  if (said !== undefined) return said;
  if (typeof failure.code === "number") return `exit code ${failure.code}, nothing on stderr`;
  if (failure.signal) return `killed by ${failure.signal}`;
  return error instanceof Error ? (error.message.split("\n")[0] ?? "failed") : String(error);
}

/** Long enough for any tool's one-line reason; CoreSimulator's NSError dumps run past 200 characters. */
const MAX_LINE = 300;

function lastLine(output: string | Buffer | undefined): string | undefined {
  if (output === undefined) return undefined;
  const line = String(output)
    .split("\n")
    .map((l) => l.trim())
    .findLast((l) => l !== "")
    // An NSError as Foundation prints it ends in its UserInfo dictionary, which repeats what came before.
    ?.replace(/ UserInfo=\{.*$/, "");
  return line !== undefined && line.length > MAX_LINE ? `${line.slice(0, MAX_LINE - 1)}…` : line;
}

function seconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${ms} ms`;
}
