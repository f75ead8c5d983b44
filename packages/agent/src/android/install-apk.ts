/**
 * Installs an APK on the device: `adb install -r -t -g`. -r replaces an installed build, -t allows a test-only
 * APK (what Gradle's debug and androidTest builds are), -g grants the runtime permissions the manifest asks
 * for, so no dialog stops a test. adb refuses any file whose name does not end in .apk, and the agent's
 * cache names files by their sha256, so the APK is linked under a proper name first.
 */
import path from "node:path";
import { linkNamed } from "../steps/named-binary.ts";
import type { Adb } from "./adb.ts";

export type InstallResult = { ok: true } | { ok: false; deviceLost: boolean; message: string };

/** A link named `<name>.apk` in `dir` to the cached file. */
export function apkNamed(cached: string, dir: string, name: string): Promise<string> {
  return linkNamed(cached, dir, name, "apk");
}

export async function installApk(adb: Adb, apk: string, timeoutMs: number): Promise<InstallResult> {
  const result = await adb.run(["install", "-r", "-t", "-g", apk], timeoutMs);
  // Old adb versions exit 0 when the install failed: only "Success" says it worked.
  if (result.ok && result.lines.some((line) => line.trim() === "Success")) return { ok: true };
  const failure = result.lines.map((line) => /Failure \[.*\]/.exec(line)?.[0]).find(Boolean);
  const last = [...result.lines].reverse().find((line) => line.trim() !== "");
  const why = result.timedOut
    ? `timed out after ${Math.round(timeoutMs / 1000)} s`
    : (failure ?? last ?? `exit code ${result.exitCode}`);
  return {
    ok: false,
    deviceLost: result.deviceLost || !(await adb.present()),
    message: `adb install ${path.basename(apk)} failed: ${why}`,
  };
}
