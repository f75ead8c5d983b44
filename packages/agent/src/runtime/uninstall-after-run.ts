/**
 * API.md §13: a device the agent does not manage (a plugged-in phone, a simulator someone else booted) is not
 * reset, but what a run installed on it is uninstalled after the run, so the next run does not find it: on
 * Android the app and the test APK (`adb uninstall`), on iOS the app and the XCUITest runners
 * (`simctl uninstall` / `devicectl device uninstall app`, apple/ios-device.ts). Something that is not there (the
 * run failed before installing it) is not an error; any other failure is a line in the agent's log, never the
 * run's result, which is already decided.
 */
import { execFile } from "node:child_process";
import { type AgentJob, readApkIdentity } from "@testbay/client";
import { IosDevice } from "../apple/ios-device.ts";
import { XcodeTools } from "../apple/xcrun.ts";
import type { BinaryCache } from "./binary-cache.ts";

interface UninstallOptions {
  env: NodeJS.ProcessEnv;
  log: (message: string) => void;
  /** Where devicectl may write its JSON listing (the agent's work root). */
  scratchDir: string;
  /** Where the run's version files were downloaded: an additional APK's package is read from its file. */
  cache: BinaryCache;
}

/** Android packages a run installs: the app and the instrumentation test APK. */
export function runPackages(job: AgentJob): string[] {
  const packages: string[] = [];
  if (job.package_name) packages.push(job.package_name);
  const testPackage = job.test_package;
  if (testPackage?.format === "apk" && testPackage.test.package_name)
    packages.push(testPackage.test.package_name);
  return packages;
}

/**
 * iOS bundles a run installs: the app and, for XCUITest, each test target's host (a UI test target's
 * `….xctrunner` app; a unit test target's host is the app itself, so it is not listed twice).
 */
export function runBundleIds(job: AgentJob): string[] {
  const bundles = new Set<string>();
  if (job.package_name) bundles.add(job.package_name);
  const testPackage = job.test_package;
  if (testPackage?.format === "xctest") {
    for (const target of testPackage.test.test_targets) if (target.bundle_id) bundles.add(target.bundle_id);
  }
  return [...bundles];
}

export async function uninstallAfterRun(
  job: AgentJob,
  device: { serial: string; platform: string },
  options: UninstallOptions,
): Promise<void> {
  if (device.platform === "ios") await uninstallIosBundles(job, device.serial, options);
  else await uninstallAndroidPackages(job, device.serial, options);
}

/**
 * The packages of the additional APKs the job's steps name (API.md §14), read from the files the run downloaded;
 * a file the run never downloaded was never installed either.
 */
async function additionalPackages(job: AgentJob, cache: BinaryCache): Promise<string[]> {
  const names = new Set<string>();
  for (const step of job.plan.steps as Array<{ additional_apks?: string[] }>) {
    for (const name of step.additional_apks ?? []) names.add(name);
  }
  const packages: string[] = [];
  for (const name of names) {
    const file = job.version_files.find((f) => f.name === name);
    if (!file) continue;
    const local = await cache
      .get(file.sha256, () => Promise.reject(new Error("not downloaded")))
      .catch(() => null);
    if (local === null) continue;
    const identity = await readApkIdentity(local).catch(() => null);
    if (identity) packages.push(identity.packageName);
  }
  return packages;
}

async function uninstallAndroidPackages(job: AgentJob, serial: string, options: UninstallOptions) {
  const packages = [...new Set([...runPackages(job), ...(await additionalPackages(job, options.cache))])];
  for (const pkg of packages) {
    await new Promise<void>((resolve) => {
      execFile(
        "adb",
        ["-s", serial, "uninstall", pkg],
        { env: options.env, timeout: 60_000 },
        (error, stdout, stderr) => {
          const said = `${stdout}${stderr}`.trim();
          if (error && !/DELETE_FAILED_INTERNAL_ERROR|Unknown package/.test(said)) {
            options.log(`device ${serial}: adb uninstall ${pkg} failed: ${said || error.message}`);
          }
          resolve();
        },
      );
    });
  }
}

async function uninstallIosBundles(job: AgentJob, udid: string, options: UninstallOptions) {
  const bundles = runBundleIds(job);
  if (bundles.length === 0) return;
  const tools = new XcodeTools({
    workDir: options.scratchDir,
    signal: AbortSignal.timeout(5 * 60_000),
    env: options.env,
  });
  const device = await IosDevice.find(udid, tools, options.scratchDir);
  if (!device) {
    options.log(`device ${udid}: not listed by simctl or devicectl after the run; nothing uninstalled`);
    return;
  }
  for (const bundle of bundles) {
    const removed = await device.uninstall(bundle);
    if (!removed.ok && !/not installed|No such|could not be found|not found/i.test(removed.message)) {
      options.log(`device ${udid}: ${removed.message}`);
    }
  }
}
