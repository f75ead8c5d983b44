/**
 * Xcode's command line tools as the agent drives them: `xcrun simctl` (simulators), `xcrun devicectl`
 * (physical devices, Xcode 15+), `xcrun xcresulttool` (result bundles) and `xcodebuild`. Every call goes
 * through runProcess, so a stuck tool is bounded and a cancelled step leaves nothing running; the output is
 * kept for messages, and long-running captures (log stream, recordVideo) are started by the callers that stop
 * them (apple/simulator-captures.ts).
 */
import { type ProcessResult, runProcess } from "../steps/process-runner.ts";

export interface ToolResult extends ProcessResult {
  /** stdout lines, in order. */
  stdout: string[];
  /** stderr lines, in order. */
  stderr: string[];
  /** Exit code 0. */
  ok: boolean;
}

export interface XcrunOptions {
  workDir: string;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** Lines to the run's log (xcodebuild's, simctl's errors); stdout of JSON queries is not logged. */
  log?: (stream: "stdout" | "stderr", line: string) => void;
}

/** simctl's and devicectl's commands that change nothing and are asked often: not worth a log line each. */
export type Quiet = "quiet" | "logged";

export class XcodeTools {
  constructor(private readonly options: XcrunOptions) {}

  /** The environment the tools run with (PATH decides which xcrun and xcodebuild). */
  get env(): NodeJS.ProcessEnv {
    return this.options.env ?? process.env;
  }

  /** Runs `command ARGS…` (xcrun or xcodebuild) to its end or its time limit. */
  async run(
    command: "xcrun" | "xcodebuild",
    args: readonly string[],
    timeoutMs: number,
    how: Quiet = "logged",
    onLine?: (stream: "stdout" | "stderr", line: string) => void,
    signal: AbortSignal = this.options.signal,
  ): Promise<ToolResult> {
    const stdout: string[] = [];
    const stderr: string[] = [];
    const result = await runProcess({
      command,
      args,
      cwd: this.options.workDir,
      env: this.env,
      timeoutMs,
      signal,
      onLine: (stream, line) => {
        (stream === "stdout" ? stdout : stderr).push(line);
        if (how === "logged" || stream === "stderr") this.options.log?.(stream, line);
        onLine?.(stream, line);
      },
    });
    return { ...result, stdout, stderr, ok: result.exitCode === 0 };
  }

  xcrun(args: readonly string[], timeoutMs: number, how: Quiet = "logged") {
    return this.run("xcrun", args, timeoutMs, how);
  }

  /**
   * `xcrun simctl list devices --json`, parsed; null with why when simctl could not say. Asked with a signal
   * of its own: whether the simulator is still there is asked after a cancel too.
   */
  async listSimulators(timeoutMs = 30_000): Promise<{ json: unknown } | { error: string }> {
    const listed = await this.run(
      "xcrun",
      ["simctl", "list", "devices", "--json"],
      timeoutMs,
      "quiet",
      undefined,
      new AbortController().signal,
    );
    if (!listed.ok) return { error: `simctl list devices failed: ${lastLine(listed)}` };
    try {
      return { json: JSON.parse(listed.stdout.join("\n")) };
    } catch (error) {
      return { error: `simctl list devices printed no JSON: ${(error as Error).message}` };
    }
  }
}

/** The last thing a tool said (stderr first: that is where simctl and xcodebuild explain), for messages. */
export function lastLine(result: ToolResult): string {
  const lines = [...result.stderr, ...result.stdout].filter((l) => l.trim() !== "");
  // The error itself, not the usage text the tools print after it.
  const line = lines.findLast((l) => /\berror\b/i.test(l)) ?? lines.at(-1);
  if (line !== undefined) return line.trim();
  if (result.spawnError) return result.spawnError;
  if (result.timedOut) return "timed out";
  return result.exitCode === null
    ? `killed by ${result.signal ?? "a signal"}`
    : `exit code ${result.exitCode}`;
}
