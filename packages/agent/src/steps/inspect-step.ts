/**
 * The inspect step: checks the uploaded binary's metadata against the plan's expectations, one test case
 * per expectation, without a device and without downloading the binary.
 */
import type { InspectStep } from "@testbay/client";
import { PASSED } from "./outcome.ts";
import type { BinaryMetadata, StepContext, StepOutcome, TestCase } from "./step-types.ts";

/** Sizes are in MB of 1,000,000 bytes (as stores and `ls -h --si` count), not MiB. */
const BYTES_PER_MB = 1_000_000;

type Expect = InspectStep["expect"];

/** null when the expectation holds, else the one-line reason naming the actual value. */
type Check = { name: string; failure: string | null };

export async function runInspectStep(step: InspectStep, ctx: StepContext): Promise<StepOutcome> {
  const cases = checkExpectations(step.expect, ctx.binary, ctx.binarySizeBytes).map(
    (check): TestCase => ({
      classname: "inspect",
      name: check.name,
      status: check.failure === null ? "passed" : "failed",
      duration_ms: null,
      message: check.failure,
      details: null,
    }),
  );
  for (const testCase of cases) ctx.testCase(testCase);
  const failures = cases.flatMap((c) => (c.message === null ? [] : [c.message]));
  if (failures.length === 0) return PASSED;
  return { status: "failed", message: failures.join("; ") };
}

/** One check per expectation present, in a fixed order. */
export function checkExpectations(expect: Expect, binary: BinaryMetadata, sizeBytes: number): Check[] {
  const checks: Check[] = [];
  if (expect.max_size_mb !== undefined) checks.push(maxSize(expect.max_size_mb, sizeBytes));
  if (expect.min_sdk_at_most !== undefined) checks.push(minSdkAtMost(expect.min_sdk_at_most, binary));
  if (expect.target_sdk_at_least !== undefined)
    checks.push(targetSdkAtLeast(expect.target_sdk_at_least, binary));
  if (expect.abis_include !== undefined) checks.push(abisInclude(expect.abis_include, binary));
  if (expect.permissions_exclude !== undefined)
    checks.push(permissionsExclude(expect.permissions_exclude, binary));
  if (expect.debuggable !== undefined) checks.push(debuggable(expect.debuggable, binary));
  return checks;
}

function maxSize(limit: number, sizeBytes: number): Check {
  const mb = sizeBytes / BYTES_PER_MB;
  // The exact byte count too: "50.0 MB, over the limit of 50 MB" alone would read as a bug.
  const actual = `${mb.toFixed(1)} MB (${sizeBytes.toLocaleString("en-US")} bytes)`;
  return {
    name: `max_size_mb ≤ ${limit}`,
    failure: mb <= limit ? null : `size is ${actual}, over the limit of ${limit} MB`,
  };
}

function minSdkAtMost(limit: number, binary: BinaryMetadata): Check {
  const name = `min_sdk ≤ ${limit}`;
  if (binary.min_sdk === null) return { name, failure: hasNo("minSdk", binary) };
  const ok = binary.min_sdk <= limit;
  return { name, failure: ok ? null : `minSdk is ${binary.min_sdk}, expected at most ${limit}` };
}

function targetSdkAtLeast(limit: number, binary: BinaryMetadata): Check {
  const name = `target_sdk ≥ ${limit}`;
  if (binary.target_sdk === null) return { name, failure: hasNo("targetSdk", binary) };
  const ok = binary.target_sdk >= limit;
  return { name, failure: ok ? null : `targetSdk is ${binary.target_sdk}, expected at least ${limit}` };
}

function abisInclude(wanted: readonly string[], binary: BinaryMetadata): Check {
  const name = `abis include ${wanted.join(", ")}`;
  if (binary.platform !== "android") return { name, failure: hasNo("Android ABI list", binary) };
  const lacking = wanted.filter((abi) => !binary.abis.includes(abi));
  return {
    name,
    failure: lacking.length === 0 ? null : `abis [${binary.abis.join(", ")}] lack ${lacking.join(", ")}`,
  };
}

function permissionsExclude(forbidden: readonly string[], binary: BinaryMetadata): Check {
  const requested = forbidden.filter((permission) => binary.permissions.includes(permission));
  return {
    name: `permissions exclude ${forbidden.join(", ")}`,
    failure: requested.length === 0 ? null : `requests ${requested.join(", ")}`,
  };
}

function debuggable(wanted: boolean, binary: BinaryMetadata): Check {
  return {
    name: `debuggable is ${wanted}`,
    failure: binary.debuggable === wanted ? null : `debuggable is ${binary.debuggable}, expected ${wanted}`,
  };
}

/** For an expectation the platform has no value for (minSdk of an iOS app). */
function hasNo(what: string, binary: BinaryMetadata): string {
  return `the binary has no ${what} (${binary.platform} ${binary.format})`;
}
