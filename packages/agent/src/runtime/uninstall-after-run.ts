/**
 * API.md §13: a device the agent does not manage (plugged in) is not reset, but the app and the test package a
 * run installed are uninstalled after it (`adb uninstall`), so the next run does not find them. A package that
 * is not there (the run failed before installing it) is not an error.
 */
import { execFile } from "node:child_process";
import type { AgentJob } from "@testbay/client";

export function runPackages(job: AgentJob): string[] {
  const packages: string[] = [];
  if (job.package_name) packages.push(job.package_name);
  const testPackage = job.test_package as
    | { format?: string; test?: { package_name?: string } }
    | null
    | undefined;
  if (testPackage?.format === "apk" && testPackage.test?.package_name)
    packages.push(testPackage.test.package_name);
  return packages;
}

export async function uninstallRunPackages(
  job: AgentJob,
  serial: string,
  options: { env: NodeJS.ProcessEnv; log: (message: string) => void },
): Promise<void> {
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
