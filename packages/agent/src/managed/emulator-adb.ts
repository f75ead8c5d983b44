/**
 * The adb calls a managed emulator needs (API.md §13): wait until it is a device, read sys.boot_completed and
 * the facts claims carry, and the console's `emu avd snapshot save|load` and `emu kill`. Each call is bounded:
 * an emulator that hangs must not hang the agent.
 */
import { execFile } from "node:child_process";

export interface AdbCallResult {
  ok: boolean;
  stdout: string;
  /** stdout and stderr, for messages. */
  text: string;
}

export function adbCall(
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; timeoutMs: number; signal?: AbortSignal },
): Promise<AdbCallResult> {
  return new Promise((resolve) => {
    execFile(
      "adb",
      [...args],
      { env: options.env, timeout: options.timeoutMs, signal: options.signal },
      (error, stdout, stderr) => {
        const text = `${stdout}${stderr}`.trim();
        resolve({ ok: !error, stdout: String(stdout), text: text || (error ? error.message : "") });
      },
    );
  });
}

/**
 * The emulator console's answer as `adb emu` prints it: it ends `OK`, or says `KO: why` (and adb still exits
 * 0), so the reply is read, not the exit status.
 */
export function consoleRefusal(result: AdbCallResult): string | null {
  if (!result.ok) return result.text || "adb emu failed";
  const ko = result.stdout.split(/\r?\n/).find((line) => line.startsWith("KO"));
  if (ko) return ko;
  return /^OK\b/m.test(result.stdout) ? null : result.text || "no answer from the emulator console";
}
