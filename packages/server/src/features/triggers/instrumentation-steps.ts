/**
 * Instrumentation steps run the version's test package. Checking that at trigger time turns what would be a
 * device run failing minutes later on an agent ("Unable to find instrumentation info") into an answer the
 * pipeline gets at once, and fills in the test package and runner the plan left out, so the execution says
 * exactly what ran.
 */
import { ApiError } from "../../errors.ts";
import type { TestPlanRecord } from "../testplans/index.ts";
import type { TestPackageRecord } from "../versions/index.ts";

type Step = TestPlanRecord["steps"][number];

export function needsTestPackage(plan: TestPlanRecord): boolean {
  return plan.steps.some((step) => step.type === "instrumentation");
}

/**
 * The plan's steps with each instrumentation step's `test_package` and `runner` taken from the test package;
 * throws `test_package_not_found` when there is none and `test_package_mismatch` when the plan names others.
 */
export function resolveInstrumentationSteps(
  plan: TestPlanRecord,
  where: { packageName: string; version: string },
  testPackage: TestPackageRecord | undefined,
): Step[] {
  if (!needsTestPackage(plan)) return plan.steps;
  const versionPath = `/v1/apps/${where.packageName}/versions/${where.version}`;
  if (!testPackage) {
    throw new ApiError("test_package_not_found", {
      detail: `Test plan ${plan.id} (${plan.name}) has an instrumentation step, and version ${where.version} of ${where.packageName} has no test package.`,
      fix: `Upload the version's test APK (app-debug-androidTest.apk): PUT ${versionPath}/test-package, or testbay upload --app ${where.packageName} --version ${where.version} --test-file PATH; then trigger again.`,
    });
  }
  const { package_name: testPackageName, runner } = testPackage.test;
  return plan.steps.map((step, index) => {
    if (step.type !== "instrumentation") return step;
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
