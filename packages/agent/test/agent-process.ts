/**
 * Test support for end-to-end tests: a real `testbay-agent` process (bin/testbay-agent.js, as an operator
 * starts it) pointed at a test server, and a bounded wait for what it should bring about.
 */
import { type ChildProcess, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";

const agentBin = fileURLToPath(new URL("../bin/testbay-agent.js", import.meta.url));

export interface AgentProcess {
  child: ChildProcess;
  /** What it wrote to stderr so far (its log). */
  output: () => string;
  exited: Promise<number | null>;
}

export interface AgentProcessOptions {
  name: string;
  /** The server's API base URL and token audience. */
  baseUrl: string;
  audience: string;
  credentials: { client_id: string; client_secret: string };
  /** Work dirs go to scratch/NAME, the binary cache to scratch/cache (shared by the agents of a test). */
  scratch: string;
  args?: string[];
  /** Added to this process's environment (PATH and FAKE_ADB_* of a device lab). */
  env?: Record<string, string>;
  /** Each started process is added here, for the test's clean-up to kill. */
  running: ChildProcess[];
}

export function startAgentProcess(options: AgentProcessOptions): AgentProcess {
  const child = spawn(
    process.execPath,
    [
      agentBin,
      "--name",
      options.name,
      "--work-dir",
      path.join(options.scratch, options.name),
      "--cache-dir",
      path.join(options.scratch, "cache"),
      ...(options.args ?? []),
    ],
    {
      env: {
        ...process.env,
        ...options.env,
        TESTBAY_URL: options.baseUrl,
        TESTBAY_CLIENT_ID: options.credentials.client_id,
        TESTBAY_CLIENT_SECRET: options.credentials.client_secret,
        TESTBAY_AUDIENCE: options.audience,
      },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let text = "";
  child.stderr?.on("data", (chunk) => {
    text += String(chunk);
  });
  options.running.push(child);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return { child, output: () => text, exited };
}

/** Kills what is still running of the processes started, and waits until each is gone. */
export async function stopAgentProcesses(running: ChildProcess[]): Promise<void> {
  for (const child of running.splice(0)) {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
  }
}

/** Polls until `check` returns something truthy; bounded, so a broken agent fails the test instead of hanging it. */
export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  timeoutMs = 120_000,
): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
