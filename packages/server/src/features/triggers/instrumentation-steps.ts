/**
 * Instrumentation and xcuitest steps run the version's test package. Checking that at trigger time turns what
 * would be a device run failing minutes later on an agent ("Unable to find instrumentation info", an
 * -only-testing target xcodebuild does not know and so runs nothing of) into an answer the pipeline gets at
 * once, and fills in the test package and runner the plan left out, so the execution says exactly what ran.
 */
import { ApiError } from "../../errors.ts";
import type { TestPlanRecord } from "../testplans/index.ts";
import type { TestPackageRecord } from "../versions/index.ts";

type Step = TestPlanRecord["steps"][number];

/** What each step type needs as the version's test package, and how to make it. */
const testPackageKinds = {
  instrumentation: {
    format: "apk",
    what: "test APK",
    made: "the test APK Gradle builds (app-debug-androidTest.apk)",
  },
  xcuitest: {
    format: "xctest",
    what: "XCUITest bundle",
    made: "a zip of what xcodebuild build-for-testing writes (the .xctestrun with the -Runner.app and test bundles beside it, from Build/Products)",
  },
} as const;

function testPackageKind(step: Step) {
  return step.type === "instrumentation" || step.type === "xcuitest"
    ? testPackageKinds[step.type]
    : undefined;
}

export function needsTestPackage(plan: TestPlanRecord): boolean {
  return plan.steps.some((step) => testPackageKind(step) !== undefined);
}

/**
 * The plan's steps with each instrumentation step's `test_package` and `runner` taken from the test package (and
 * each xcuitest step's targets checked against it);
 * throws `test_package_not_found` when there is none and `test_package_mismatch` when the plan names others.
 */
export function resolveInstrumentationSteps(
  plan: TestPlanRecord,
  where: { packageName: string; version: string },
  testPackage: TestPackageRecord | undefined,
): Step[] {
  const firstNeed = plan.steps.map(testPackageKind).find((kind) => kind !== undefined);
  if (firstNeed === undefined) return plan.steps;
  const versionPath = `/v1/apps/${where.packageName}/versions/${where.version}`;
  const upload = (made: string) =>
    `Upload ${made}: PUT ${versionPath}/test-package, or testbay upload --app ${where.packageName} --version ${where.version} --file BUILD --test-file PATH (the build is skipped when it is registered already); then trigger again.`;
  if (!testPackage) {
    const stepType = firstNeed === testPackageKinds.xcuitest ? "an xcuitest" : "an instrumentation";
    throw new ApiError("test_package_not_found", {
      detail: `Test plan ${plan.id} (${plan.name}) has ${stepType} step, and version ${where.version} of ${where.packageName} has no test package.`,
      fix: upload(`the version's ${firstNeed.what}, ${firstNeed.made}`),
    });
  }
  return plan.steps.map((step, index) => {
    const kind = testPackageKind(step);
    if (kind === undefined) return step;
    if (testPackage.format !== kind.format) {
      throw new ApiError("test_package_mismatch", {
        reason: "format",
        detail: `Step ${index + 1} of test plan ${plan.id} is a ${step.type} step, which runs a ${kind.what}, but the test package of ${where.packageName} ${where.version} is ${testPackage.format === "apk" ? "a test APK" : "an XCUITest bundle"}.`,
        fix: `${upload(`${kind.made} to a new version`)} Or run this version with a plan whose steps fit its test package.`,
        extra: { package_name: where.packageName },
      });
    }
    if (step.type === "xcuitest" && testPackage.format === "xctest") {
      checkTestTargets(step, index, plan, where, testPackage.test.test_targets);
      return step;
    }
    if (step.type !== "instrumentation" || testPackage.format !== "apk") return step;
    const { package_name: testPackageName, runner } = testPackage.test;
    const named = (field: string, given: string, actual: string) =>
      new ApiError("test_package_mismatch", {
        detail: `Step ${index + 1} of test plan ${plan.id} names ${field} ${given}, but the test package of ${where.packageName} ${where.version} has ${actual}.`,
        fix: `Leave ${field} out of the step (it defaults to the test package's) or set it to ${actual}: PATCH /v1/testplans/${plan.id}; or upload the test APK that has ${given}.`,
        extra: { package_name: where.packageName, target_package: testPackage.test.target_package },
      });
    if (step.test_package !== undefined && step.test_package !== testPackageName) {
      throw named("test_package", step.test_package, testPackageName);
    }
    if (step.runner !== undefined && step.runner !== runner) throw named("runner", step.runner, runner);
    return { ...step, test_package: testPackageName, runner };
  });
}

/**
 * An xcuitest step's identifiers must name targets of the .xctestrun: xcodebuild runs nothing for an
 * -only-testing target it does not have, and passes.
 */
function checkTestTargets(
  step: Extract<Step, { type: "xcuitest" }>,
  index: number,
  plan: TestPlanRecord,
  where: { packageName: string; version: string },
  targets: ReadonlyArray<{ name: string }>,
): void {
  const names = new Set(targets.map((target) => target.name));
  for (const field of ["only_testing", "skip_testing"] as const) {
    const unknown = step[field]?.find((identifier) => !names.has(identifier.split("/")[0] ?? ""));
    if (unknown === undefined) continue;
    const known = [...names].join(", ") || "none";
    throw new ApiError("test_package_mismatch", {
      reason: "unknown_test_target",
      detail: `Step ${index + 1} of test plan ${plan.id} has ${field} ${unknown}, but the test package of ${where.packageName} ${where.version} has no test target ${unknown.split("/")[0]} (its targets: ${known}).`,
      fix: `Start each ${field} entry with one of the test package's targets (${known}): PATCH /v1/testplans/${plan.id}; or upload the build-for-testing output that has that target.`,
      extra: { package_name: where.packageName },
    });
  }
}
