import { type ChildProcessByStdio, spawn } from "node:child_process";
import { readFile } from "node:fs/promises";
import { createInterface } from "node:readline";
import type { Readable } from "node:stream";
import { fileURLToPath } from "node:url";

const bin = fileURLToPath(new URL("../bin/testbay-server.js", import.meta.url));

/** tsx start-up is about a second, but a loaded CI machine has been seen to need over 20 s. */
const patienceMs = 50_000;

type Child = ChildProcessByStdio<null, Readable, Readable>;

/** The runner's environment without its TESTBAY_* variables: the child sees only what the test sets. */
function childEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const inherited = Object.entries(process.env).filter(([name]) => !name.startsWith("TESTBAY_"));
  return { ...Object.fromEntries(inherited), ...env };
}

export interface ServerProcess {
  /** `http://127.0.0.1:PORT` */
  origin: string;
  pid: number;
  /** Log lines (stdout) at warn and above, kept to explain a failure. */
  problems: string[];
  /** Resident set size of the server process now, in bytes (Linux /proc). */
  rssBytes(): Promise<number>;
  /** Runs `testbay-server ARGS…` against the same store and returns its stdout. */
  runCli(args: string[]): Promise<string>;
  stop(): Promise<void>;
}

/**
 * `testbay-server start` as its own process, as an operator runs it: for tests that measure the server
 * alone (its memory) or must see it survive what they send.
 */
export async function startServerProcess(env: Record<string, string>): Promise<ServerProcess> {
  const child: Child = spawn(process.execPath, [bin, "start"], {
    env: childEnv({ TESTBAY_PORT: "0", ...env }),
    stdio: ["ignore", "pipe", "pipe"],
  });
  const exited = new Promise<number | null>((resolve) => child.once("close", resolve));
  const problems: string[] = [];
  createInterface({ input: child.stdout }).on("line", (line) => {
    if (/"level":(40|50|60)/.test(line) && problems.length < 200) problems.push(line);
  });
  const stderr: string[] = [];
  const listening = new Promise<string>((resolve, reject) => {
    createInterface({ input: child.stderr }).on("line", (line) => {
      stderr.push(line);
      const match = /^Testbay is listening on (http:\/\/[^/]+)/.exec(line);
      if (match?.[1]) resolve(match[1]);
    });
    void exited.then((code) => reject(new Error(`testbay-server exited (${code}):\n${stderr.join("\n")}`)));
    setTimeout(
      () => reject(new Error(`testbay-server did not listen within ${patienceMs} ms`)),
      patienceMs,
    ).unref();
  });
  let origin: string;
  try {
    origin = await listening;
  } catch (error) {
    child.kill("SIGKILL");
    throw error;
  }
  const pid = child.pid ?? 0;
  return {
    origin,
    pid,
    problems,
    async rssBytes() {
      const status = await readFile(`/proc/${pid}/status`, "utf8");
      const kib = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
      if (!kib) throw new Error("no VmRSS in /proc status");
      return Number(kib) * 1024;
    },
    runCli(args) {
      return new Promise((resolve, reject) => {
        const cli = spawn(process.execPath, [bin, ...args], {
          env: childEnv(env),
          stdio: ["ignore", "pipe", "pipe"],
        });
        let out = "";
        let err = "";
        cli.stdout.setEncoding("utf8").on("data", (chunk: string) => {
          out += chunk;
        });
        cli.stderr.setEncoding("utf8").on("data", (chunk: string) => {
          err += chunk;
        });
        cli.once("close", (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${err}`))));
      });
    },
    async stop() {
      child.kill("SIGTERM");
      const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
  };
}
