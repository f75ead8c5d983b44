/**
 * Waits until an emulator instance has booted, as API.md §13 says: `adb -s emulator-P wait-for-device`, then
 * `getprop sys.boot_completed` until it reads 1, all within the boot timeout (300 s by default). The instance
 * exiting meanwhile ends the wait at once.
 */
import { adbCall } from "./emulator-adb.ts";
import type { EmulatorProcess } from "./emulator-process.ts";

export interface BootWait {
  env: NodeJS.ProcessEnv;
  bootTimeoutMs: number;
  /** How often sys.boot_completed is read while booting. */
  pollMs: number;
}

export type BootOutcome = "booted" | "timeout" | "exited";

export async function waitForBoot(instance: EmulatorProcess, options: BootWait): Promise<BootOutcome> {
  const deadline = Date.now() + options.bootTimeoutMs;
  const stop = new AbortController();
  const exited = instance.exited.then(() => "exited" as const);
  const booted = (async (): Promise<BootOutcome> => {
    const left = () => Math.max(1, deadline - Date.now());
    const waited = await adbCall(["-s", instance.serial, "wait-for-device"], {
      env: options.env,
      timeoutMs: left(),
      signal: stop.signal,
    });
    if (!waited.ok) return Date.now() >= deadline ? "timeout" : "exited";
    while (Date.now() < deadline && !stop.signal.aborted) {
      const prop = await adbCall(["-s", instance.serial, "shell", "getprop", "sys.boot_completed"], {
        env: options.env,
        timeoutMs: Math.min(left(), 30_000),
        signal: stop.signal,
      });
      if (prop.ok && prop.stdout.trim() === "1") return "booted";
      await new Promise((resolve) => setTimeout(resolve, Math.min(options.pollMs, left())));
    }
    return "timeout";
  })();
  try {
    return await Promise.race([booted, exited]);
  } finally {
    stop.abort();
  }
}
