import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import type { CleanupScope } from "./cleanup.ts";
import { repoRoot } from "./paths.ts";

export interface ServerProcessOptions {
  label: string;
  /** Entry file, absolute; run as `node [nodeFlags] --import tsx <entry>` from the repository root. */
  entry: string;
  /** Node/V8 flags before the entry: Testbay's get `testbayNodeFlags`, what its launcher runs it with. */
  nodeFlags?: readonly string[];
  /** Added to this process's environment, from which every `TESTBAY_*` variable is removed first. */
  env?: Record<string, string>;
  /** Pin the server to this CPU (`taskset -c`). */
  cpu?: number;
  /** The child's stdout (where a server logs) goes to this file. */
  stdoutFile: string;
  readyTimeoutMs?: number;
}

export interface ServerProcess<Ready> {
  label: string;
  pid: number;
  /** What the child sent with its `ready` message. */
  ready: Ready;
  /** SIGTERM, then SIGKILL after 5 s; resolves once the child has exited. Safe to call twice. */
  stop(): Promise<void>;
}

/** The message a bench server sends over IPC once it listens (see bench/servers/lifecycle.ts). */
export interface ReadyMessage {
  type: "ready";
}

const stderrKept = 8192;

/**
 * The node flags `testbay-server` runs with, read from its launcher's `#!/usr/bin/env -S node …` line, so a
 * benchmark measures the server as shipped and cannot drift from it.
 */
export const testbayNodeFlags: readonly string[] = (() => {
  const launcher = path.join(repoRoot, "packages", "server", "bin", "testbay-server.js");
  const shebang = readFileSync(launcher, "utf8").split("\n", 1)[0] ?? "";
  const match = /^#!\/usr\/bin\/env -S node(.*)$/.exec(shebang);
  if (!match) throw new Error(`${launcher}: expected a "#!/usr/bin/env -S node …" line, found ${shebang}`);
  return (match[1] ?? "").trim().split(/\s+/).filter(Boolean);
})();

/**
 * Starts a benchmark server in its own process and waits for its `ready` message. Every server is started
 * this same way, so differences in how they start cannot show up in what is measured. The child is stopped
 * when `scope` closes.
 */
export async function startServerProcess<Ready extends ReadyMessage>(
  options: ServerProcessOptions,
  scope: CleanupScope,
): Promise<ServerProcess<Ready>> {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (!name.startsWith("TESTBAY_")) env[name] = value;
  }
  Object.assign(env, options.env);

  const node = [process.execPath, ...(options.nodeFlags ?? []), "--import", "tsx", options.entry];
  const [command, ...args] =
    options.cpu === undefined ? node : ["taskset", "-c", String(options.cpu), ...node];
  const stdout = openSync(options.stdoutFile, "w");
  let child: ChildProcess;
  try {
    child = spawn(command as string, args, { cwd: repoRoot, env, stdio: ["ignore", stdout, "pipe", "ipc"] });
  } finally {
    closeSync(stdout);
  }

  let stderr = "";
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-stderrKept);
  });
  // An "error" later on (a failed kill) must not crash the runner; it is kept with stderr for the report.
  child.on("error", (error) => {
    stderr = `${stderr}\n${error.message}`.slice(-stderrKept);
  });
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const stop = async () => {
    // No pid: it never started (taskset or node missing), and may never emit "exit".
    if (child.pid === undefined || exited()) return;
    const done = once(child, "exit");
    child.kill("SIGTERM");
    const force = setTimeout(() => child.kill("SIGKILL"), 5000);
    await done;
    clearTimeout(force);
  };
  // Stopped by the scope even if it never gets ready, or the run is interrupted while it starts.
  scope.defer(stop);

  const ready = await new Promise<Ready>((resolve, reject) => {
    const fail = (why: string) => {
      cleanup();
      reject(new Error(`${options.label} server ${why}${stderr ? `:\n${stderr.trimEnd()}` : ""}`));
    };
    const onMessage = (message: unknown) => {
      if (typeof message === "object" && message !== null && (message as ReadyMessage).type === "ready") {
        cleanup();
        resolve(message as Ready);
      }
    };
    const onExit = (code: number | null, signal: string | null) =>
      fail(`exited before it was ready (${signal ?? `code ${code}`})`);
    const onError = (error: Error) => fail(`could not start (${command}): ${error.message}`);
    const timeoutMs = options.readyTimeoutMs ?? 30_000;
    const timer = setTimeout(() => fail(`was not ready after ${timeoutMs / 1000} s`), timeoutMs);
    const cleanup = () => {
      clearTimeout(timer);
      child.off("message", onMessage);
      child.off("exit", onExit);
      child.off("error", onError);
    };
    child.on("message", onMessage);
    child.on("exit", onExit);
    child.on("error", onError);
  });
  if (child.pid === undefined) throw new Error(`${options.label} server has no pid`);
  return { label: options.label, pid: child.pid, ready, stop };
}
