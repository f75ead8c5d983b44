/**
 * The xcodebuild command lines of an xcuitest step: running the built tests on one device
 * (`test-without-building -xctestrun … -destination id=UDID -resultBundlePath …`) with the tests to run or
 * skip, and listing them first (`-enumerate-tests`, Xcode 16+) so that shards and reruns run exact lists and
 * a crash leaves the tests it kept from running `errored`, not missing.
 */
import type { TestRef } from "../steps/retry-failed-tests.ts";
import { refFromIdentifier, xcodeIdentifier } from "./test-identifiers.ts";

export interface XcodebuildTarget {
  /** The .xctestrun file from the test package (its paths are relative to its folder: __TESTROOT__). */
  xctestrun: string;
  udid: string;
}

export interface TestSelection {
  /** The step's only_testing: "Target", "Target/Class" or "Target/Class/method". */
  onlyTesting?: readonly string[];
  /** The step's skip_testing, in the same forms. */
  skipTesting?: readonly string[];
  /** An exact list (a shard's batch, a rerun's one test): replaces only_testing, keeps skip_testing. */
  exact?: readonly TestRef[];
}

function selectionArgs(selection: TestSelection): string[] {
  const only = selection.exact ? selection.exact.map(xcodeIdentifier) : (selection.onlyTesting ?? []);
  return [
    ...only.map((id) => `-only-testing:${id}`),
    ...(selection.skipTesting ?? []).map((id) => `-skip-testing:${id}`),
  ];
}

export function testWithoutBuildingArgs(
  target: XcodebuildTarget,
  resultBundle: string,
  selection: TestSelection,
): string[] {
  return [
    "test-without-building",
    "-xctestrun",
    target.xctestrun,
    "-destination",
    `id=${target.udid}`,
    "-resultBundlePath",
    resultBundle,
    ...selectionArgs(selection),
  ];
}

/** Lists the tests the step would run into `output` as JSON, one flat list, without running any. */
export function enumerateTestsArgs(
  target: XcodebuildTarget,
  output: string,
  selection: TestSelection,
): string[] {
  return [
    "test-without-building",
    "-enumerate-tests",
    "-test-enumeration-format",
    "json",
    "-test-enumeration-style",
    "flat",
    "-test-enumeration-output-path",
    output,
    "-xctestrun",
    target.xctestrun,
    "-destination",
    `id=${target.udid}`,
    ...selectionArgs(selection),
  ];
}

export type Enumeration = { tests: TestRef[] } | { error: string };

/**
 * The enabled tests of a flat enumeration: {errors: [], values: [{enabledTests: [{identifier}], disabledTests,
 * testPlan}]}. Disabled tests do not run and are not listed; errors (a bundle that would not load) fail it.
 */
export function parseEnumeration(text: string): Enumeration {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { error: `the test listing is not JSON: ${(error as Error).message}` };
  }
  const doc = json as { errors?: unknown; values?: unknown } | null;
  if (doc === null || typeof doc !== "object" || !Array.isArray(doc.values)) {
    return { error: "the test listing has no values" };
  }
  if (Array.isArray(doc.errors) && doc.errors.length > 0) {
    return { error: `xcodebuild could not list the tests: ${describeErrors(doc.errors)}` };
  }
  const seen = new Set<string>();
  const tests: TestRef[] = [];
  for (const value of doc.values as Array<{ enabledTests?: unknown }>) {
    if (!Array.isArray(value?.enabledTests)) continue;
    for (const test of value.enabledTests as Array<{ identifier?: unknown }>) {
      if (typeof test?.identifier !== "string") continue;
      const ref = refFromIdentifier(test.identifier);
      // A bundle or class row (a listing in another style) is not a test.
      if (ref === null) continue;
      const key = `${ref.classname}#${ref.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      tests.push(ref);
    }
  }
  return { tests };
}

function describeErrors(errors: unknown[]): string {
  return errors
    .map((e) => (typeof e === "string" ? e : JSON.stringify(e)))
    .join("; ")
    .slice(0, 500);
}
