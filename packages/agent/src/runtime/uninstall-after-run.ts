/**
 * API.md §13: a device the agent does not manage (a plugged-in phone, a simulator someone else booted) is not
 * reset, but what a run installed on it is uninstalled after the run, so the next run does not find it: on
 * Android the app and the test APK (`adb uninstall`), on iOS the app and the XCUITest runners
 * (`simctl uninstall` / `devicectl device uninstall app`, apple/ios-device.ts). Something that is not there (the
 * run failed before installing it) is not an error; any other failure is a line in the agent's log, never the
 * run's result, which is already decided.
 */
import { execFile } from "node:child_process";
import type { AgentJob } from "@testbay/client";
import { IosDevice } from "../apple/ios-device.ts";
import { XcodeTools } from "../apple/xcrun.ts";

interface UninstallOptions {
  env: NodeJS.ProcessEnv;
  log: (message: string) => void;
  /** Where devicectl may write its JSON listing (the agent's work root). */
  scratchDir: string;
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

async function uninstallAndroidPackages(job: AgentJob, serial: string, options: UninstallOptions) {
  for (const pkg of runPackages(job)) {
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
