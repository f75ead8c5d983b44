/**
 * always_run (API.md §14, Flank's test-targets-always-run): tests run first on every shard, before and apart
 * from the tests the shards split. Each entry is `Class` (every test of the class) or `Class#method` (every
 * index of a parameterized method too, as AndroidJUnitRunner's method filter compares names without the
 * index suffix: am-instrument.ts singleTestSpec).
 */
import type { TestRef } from "./retry-failed-tests.ts";

export function matchesAlwaysRun(test: TestRef, spec: string): boolean {
  const [classname, method] = spec.split("#");
  if (test.classname !== classname) return false;
  return method === undefined || test.name === method || test.name.replace(/(.)\[[0-9]+\]$/, "$1") === method;
}

/** The listing split into the always_run tests (in listing order) and the rest, which the shards share. */
export function splitAlwaysRun(
  listed: readonly TestRef[],
  alwaysRun: readonly string[],
): { first: TestRef[]; rest: TestRef[] } {
  const first: TestRef[] = [];
  const rest: TestRef[] = [];
  for (const test of listed) {
    (alwaysRun.some((spec) => matchesAlwaysRun(test, spec)) ? first : rest).push(test);
  }
  return { first, rest };
}
