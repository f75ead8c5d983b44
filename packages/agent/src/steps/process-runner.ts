/**
 * Runs one external command for a step (a shell script, adb, maestro) and makes sure that, however it
 * ends, nothing it started keeps running: the command gets its own process group, and the whole group is
 * stopped on cancel, on timeout, and when the command itself exits.
 */
import { type ChildProcessByStdio, spawn } from "node:child_process";
import type { Readable } from "node:stream";
import { LineSplitter } from "./line-splitter.ts";

export interface ProcessSpec {
  command: string;
  args: readonly string[];
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs: number;
  signal: AbortSignal;
  onLine(stream: "stdout" | "stderr", line: string): void;
  /** Time between SIGTERM and SIGKILL for the group (default 2 s). */
  killGraceMs?: number;
}

export interface ProcessResult {
  /** null when the process was ended by a signal or never started. */
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  aborted: boolean;
  /** Why the command could not be started (ENOENT …), else null. */
  spawnError: string | null;
}

const DEFAULT_KILL_GRACE_MS = 2_000;

export function runProcess(spec: ProcessSpec): Promise<ProcessResult> {
  const notRun = { exitCode: null, signal: null, timedOut: false };
  if (spec.signal.aborted) return Promise.resolve({ ...notRun, aborted: true, spawnError: null });

  return new Promise((resolve) => {
    let child: ChildProcessByStdio<null, Readable, Readable>;
    try {
      child = spawn(spec.command, spec.args, {
        cwd: spec.cwd,
        env: spec.env,
        // Its own process group, so one kill(-pid) reaches every grandchild the command started.
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
    } catch (error) {
      // Invalid arguments (a NUL byte in a plan's command) throw instead of emitting "error".
      resolve({ ...notRun, aborted: false, spawnError: (error as Error).message });
      return;
    }
    const grace = spec.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
    let timedOut = false;
    let aborted = false;
    let spawnError: string | null = null;
    let stopping = false;
    const timers: NodeJS.Timeout[] = [];

    const out = new LineSplitter((line) => spec.onLine("stdout", line));
    const err = new LineSplitter((line) => spec.onLine("stderr", line));
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => out.push(chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => err.push(chunk));

    const stopGroup = () => {
      if (stopping || child.pid === undefined) return;
      stopping = true;
      if (!signalGroup(child.pid, "SIGTERM")) return;
      const pid = child.pid;
      const kill = setTimeout(() => signalGroup(pid, "SIGKILL"), grace);
      // The agent outlives its steps; the timer must not keep a test process or a CLI alive on its own.
      kill.unref();
      // A member that escaped the group but still holds our pipes would keep "close" from ever firing.
      const detach = setTimeout(() => {
        child.stdout.destroy();
        child.stderr.destroy();
      }, grace + 1_000);
      detach.unref();
      timers.push(detach);
    };
    const onAbort = () => {
      aborted = true;
      stopGroup();
    };
    spec.signal.addEventListener("abort", onAbort, { once: true });
    const timeout = setTimeout(() => {
      timedOut = true;
      stopGroup();
    }, spec.timeoutMs);

    child.on("error", (error) => {
      spawnError = error.message;
    });
    child.on("exit", () => {
      clearTimeout(timeout);
      spec.signal.removeEventListener("abort", onAbort);
      // Whatever the command left running in the background belongs to the step and ends with it.
      stopGroup();
    });
    // "close" waits for the pipes too: every group member still writing to them is gone by then.
    child.on("close", (code, signal) => {
      clearTimeout(timeout);
      spec.signal.removeEventListener("abort", onAbort);
      for (const timer of timers) clearTimeout(timer);
      out.end();
      err.end();
      resolve({
        exitCode: spawnError === null ? code : null,
        signal: spawnError === null ? signal : null,
        timedOut,
        aborted,
        spawnError,
      });
    });
  });
}

/** Signals every process in the group; false when the group is already empty. */
function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch {
    return false;
  }
}
