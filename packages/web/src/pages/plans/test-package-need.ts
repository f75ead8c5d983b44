import type { AppVersion } from "../../api/apps.ts";
import type { TestPlan } from "../../api/types.ts";

// Which versions a plan can run on, as far as test packages go: instrumentation steps run the version's test APK,
// xcuitest steps its XCUITest bundle, and a trigger on a version without one is refused (test_package_not_found,
// packages/server/src/features/triggers/instrumentation-steps.ts). The trigger form offers the versions that fit.

export type TestPackageFormat = NonNullable<AppVersion["test_package"]>["format"];

const formatOf: Partial<Record<TestPlan["steps"][number]["type"], TestPackageFormat>> = {
  instrumentation: "apk",
  xcuitest: "xctest",
};

/** What a test package of each format is called, with its article. */
export const testPackageNames: Record<TestPackageFormat, string> = {
  apk: "a test APK",
  xctest: "an XCUITest bundle",
};

/** The test package the plan's first step that runs one needs, or undefined when no step does. */
export function neededTestPackage(plan: Pick<TestPlan, "steps">): TestPackageFormat | undefined {
  for (const step of plan.steps) {
    const format = formatOf[step.type];
    if (format) return format;
  }
  return undefined;
}

/** Why the plan cannot run on the version (for its option in the picker), or undefined when it can. */
export function unfitReason(
  version: Pick<AppVersion, "test_package">,
  need: TestPackageFormat | undefined,
): string | undefined {
  if (!need) return undefined;
  const has = version.test_package?.format;
  if (!has) return "no test package";
  return has === need ? undefined : `its test package is ${testPackageNames[has]}`;
}

/** The version a trigger starts on: the newest the plan can run on, else the newest (versions come newest first). */
export function defaultVersion<Version extends Pick<AppVersion, "version" | "test_package">>(
  versions: readonly Version[],
  need: TestPackageFormat | undefined,
): Version | undefined {
  return versions.find((version) => unfitReason(version, need) === undefined) ?? versions[0];
}
