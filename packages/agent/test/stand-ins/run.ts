// Spawns the stand-in programs for real, as the agent does, with a lab's environment.
import { type ChildProcess, spawn } from "node:child_process";
import type { DeviceLab } from "./device-lab.ts";

export interface Ran {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  bytes: Buffer;
}

export interface Running {
  child: ChildProcess;
  /** Everything written to stdout so far. */
  stdout(): string;
  done: Promise<Ran>;
}

export function start(
  lab: DeviceLab,
  tool: "adb" | "maestro" | "emulator" | "avdmanager",
  args: string[],
): Running {
  const child = spawn(tool, args, { env: { ...process.env, ...lab.env } });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  child.stdout?.on("data", (b: Buffer) => out.push(b));
  child.stderr?.on("data", (b: Buffer) => err.push(b));
  const done = new Promise<Ran>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code, signal) => {
      const bytes = Buffer.concat(out);
      resolve({
        code,
        signal,
        stdout: bytes.toString("utf8"),
        stderr: Buffer.concat(err).toString("utf8"),
        bytes,
      });
    });
  });
  return { child, stdout: () => Buffer.concat(out).toString("utf8"), done };
}

export function run(
  lab: DeviceLab,
  tool: "adb" | "maestro" | "emulator" | "avdmanager",
  args: string[],
): Promise<Ran> {
  return start(lab, tool, args).done;
}

/** Resolves once `check` holds; polls because the stand-ins are separate processes. */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
