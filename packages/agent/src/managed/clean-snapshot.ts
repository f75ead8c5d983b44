/**
 * API.md §13: the clean snapshot is made once per AVD when the agent starts: one writable instance cold-booted
 * with its user data wiped, `adb -s emulator-P emu avd snapshot save testbay-clean`, stopped. Every instance then
 * starts from it, and a reset loads it again (or restarts from it), so each run finds the device as it was here.
 */
import { adbCall, consoleRefusal } from "./emulator-adb.ts";
import { EmulatorProcess } from "./emulator-process.ts";
import { type BootWait, waitForBoot } from "./wait-for-boot.ts";

export const CLEAN_SNAPSHOT = "testbay-clean";

export interface CleanSnapshotOptions extends BootWait {
  avd: string;
  port: number;
  env: NodeJS.ProcessEnv;
  /** Every process this starts, so that the agent's stop reaches it too. */
  track(process: EmulatorProcess): void;
}

/** Makes the AVD's clean snapshot; resolves null when it exists, else why it could not be made. */
export async function makeCleanSnapshot(options: CleanSnapshotOptions): Promise<string | null> {
  const instance = new EmulatorProcess(
    { avd: options.avd, port: options.port, readOnly: false, wipeData: true },
    options.env,
  );
  options.track(instance);
  try {
    const boot = await waitForBoot(instance, options);
    if (boot !== "booted")
      return `its first boot ${boot === "timeout" ? "timed out" : "ended"}: ${instance.output.text(500)}`;
    const saved = await adbCall(["-s", instance.serial, "emu", "avd", "snapshot", "save", CLEAN_SNAPSHOT], {
      env: options.env,
      timeoutMs: options.bootTimeoutMs,
    });
    return consoleRefusal(saved);
  } finally {
    await instance.stop();
  }
}
