/**
 * Instrumentation steps name files uploaded with the version (API.md §14): additional_apks to install and
 * push[].file to put on the device. Checking at trigger time that the version has them turns an agent failing
 * to download a file minutes later into an answer the pipeline gets at once, with the upload that fixes it.
 */
import type { TestPlanRecord } from "../testplans/index.ts";
import { versionFileNotFound } from "../versions/index.ts";

type Step = TestPlanRecord["steps"][number];

/** The version files a step names, in the order it names them. */
export function versionFilesNamed(step: Step): string[] {
  if (step.type !== "instrumentation") return [];
  return [...(step.additional_apks ?? []), ...(step.push ?? []).map((entry) => entry.file)];
}

export function namesVersionFiles(plan: TestPlanRecord): boolean {
  return plan.steps.some((step) => versionFilesNamed(step).length > 0);
}

/** Throws 404 version_file_not_found for the first file a step names that the version does not have. */
export function checkVersionFiles(
  plan: TestPlanRecord,
  where: { packageName: string; version: string },
  uploaded: ReadonlySet<string>,
): void {
  plan.steps.forEach((step, index) => {
    const missing = versionFilesNamed(step).find((name) => !uploaded.has(name));
    if (missing === undefined) return;
    const has = uploaded.size === 0 ? "no files" : `the files ${[...uploaded].sort().join(", ")}`;
    throw versionFileNotFound(
      where.packageName,
      where.version,
      missing,
      `Step ${index + 1} of test plan ${plan.id} (${plan.name}) names the version file ${missing}, but version ${where.version} of ${where.packageName} has ${has}.`,
    );
  });
}
