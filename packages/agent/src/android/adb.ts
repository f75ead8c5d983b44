/**
 * One device as the agent drives it through the `adb` CLI: commands with their output kept for messages,
 * long-running ones (logcat, screenrecord) that the caller stops, binary output written to a file, and
 * the question every device step must ask when a command fails: is the device still there?
 */
import { spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { type ProcessResult, runProcess } from "../steps/process-runner.ts";

export interface AdbResult extends ProcessResult {
  /** Output lines, stdout and stderr interleaved as they came. */
  lines: string[];
  /** Exit code 0 and nothing that says the device went away. */
  ok: boolean;
  /** The output says the device is gone (adb's own words for a lost, offline or unknown device). */
  deviceLost: boolean;
}

export interface AdbOptions {
  workDir: string;
  signal: AbortSignal;
  env?: NodeJS.ProcessEnv;
  /** Every line adb prints, for the run's log. */
  log?: (stream: "stdout" | "stderr", line: string) => void;
}

/**
 * What adb prints when the device it was told to use is not there (adb transport.cpp and adb_client.cpp):
 * "adb: device 'emulator-5554' not found", "device offline", "no devices/emulators found", and "error:
 * closed" / "protocol fault" when the connection dropped under a running command.
 */
const deviceLostPatterns = [
  /device '[^']*' not found/,
  /\bdevice offline\b/,
  /no devices\/emulators found/,
  /^error: closed$/,
  /protocol fault/,
  /device still (?:authorizing|connecting)/,
];

export function saysDeviceLost(line: string): boolean {
  return deviceLostPatterns.some((pattern) => pattern.test(line.trim()));
}

export class Adb {
  constructor(
    readonly serial: string,
    private readonly options: AdbOptions,
  ) {}

  /** Runs `adb -s SERIAL ARGS…` to its end (or its time limit). */
  async run(
    args: readonly string[],
    timeoutMs: number,
    onLine?: (stream: "stdout" | "stderr", line: string) => void,
    signal: AbortSignal = this.options.signal,
  ): Promise<AdbResult> {
    const lines: string[] = [];
    let deviceLost = false;
    const result = await runProcess({
      command: "adb",
      args: ["-s", this.serial, ...args],
      cwd: this.options.workDir,
      env: this.options.env ?? process.env,
      timeoutMs,
      signal,
      onLine: (stream, line) => {
        lines.push(line);
        if (saysDeviceLost(line)) deviceLost = true;
        this.options.log?.(stream, line);
        onLine?.(stream, line);
      },
    });
    return { ...result, lines, deviceLost, ok: result.exitCode === 0 && !deviceLost };
  }

  /** `adb -s SERIAL shell COMMAND`: the command is one string, run by the device's shell. */
  shell(command: string, timeoutMs: number, onLine?: (stream: "stdout" | "stderr", line: string) => void) {
    return this.run(["shell", command], timeoutMs, onLine);
  }

  /**
   * Whether adb still sees the device as usable (`get-state` prints "device"). Asked after a command
   * ended early, to tell a lost device (an infrastructure error) from a crash of the app or its tests.
   */
  async present(timeoutMs = 10_000): Promise<boolean> {
    const state = await this.run(["get-state"], timeoutMs, undefined, new AbortController().signal);
    return state.exitCode === 0 && state.lines.some((line) => line.trim() === "device");
  }

  /**
   * Writes a command's stdout, bytes as they come, to `file` (`exec-out screencap -p`: a PNG, which line
   * splitting would mangle). Resolves with whether it exited 0 within the time limit, and its stderr.
   */
  toFile(args: readonly string[], file: string, timeoutMs: number): Promise<{ ok: boolean; stderr: string }> {
    return new Promise((resolve) => {
      const out = createWriteStream(file, { mode: 0o600 });
      const child = spawn("adb", ["-s", this.serial, ...args], {
        cwd: this.options.workDir,
        env: this.options.env ?? process.env,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stderr = "";
      let settled = false;
      const finish = (ok: boolean) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        out.end(() => resolve({ ok, stderr: stderr.trim() }));
      };
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        finish(false);
      }, timeoutMs);
      child.stdout.pipe(out, { end: false });
      child.stderr.setEncoding("utf8").on("data", (chunk: string) => {
        if (stderr.length < 4096) stderr += chunk;
      });
      child.on("error", (error) => {
        stderr ||= error.message;
        finish(false);
      });
      child.on("close", (code) => finish(code === 0));
    });
  }
}
