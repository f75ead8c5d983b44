/**
 * The `am instrument` command lines of an instrumentation step, built for the device's shell (every value
 * from a plan is quoted there). AndroidJUnitRunner's arguments: `-e log true` lists the tests without
 * running them; `-e class`, `-e package`, `-e annotation`, `-e notAnnotation` take comma-separated lists;
 * `-e testFile` names a device file with one Class or Class#method per line, for exact lists too long for
 * a command line. A test rerun alone (retry_failed_tests) is `-e class Class#method`.
 */
import type { InstrumentationStep } from "@testbay/client";
import { shellQuote } from "../steps/shell-quote.ts";

export interface InstrumentationTarget {
  testPackage: string;
  runner: string;
}

export interface InstrumentOptions {
  /** `-e log true`: report every selected test as if it ran, without running any. */
  listOnly?: boolean;
  /** A device path with the exact tests to run (pushed there first). */
  testFile?: string;
  /** One test to run alone, in place of the filter. */
  only?: { classname: string; name: string };
}

/** The plan's filter as runner arguments, in a fixed order. */
export function filterArgs(filter: InstrumentationStep["filter"]): Array<[string, string]> {
  if (!filter) return [];
  const args: Array<[string, string]> = [];
  if (filter.classes) args.push(["class", filter.classes.join(",")]);
  if (filter.packages) args.push(["package", filter.packages.join(",")]);
  if (filter.annotations) args.push(["annotation", filter.annotations.join(",")]);
  if (filter.not_annotations) args.push(["notAnnotation", filter.not_annotations.join(",")]);
  if (filter.size) args.push(["size", filter.size]);
  return args;
}

export function amInstrumentCommand(
  step: Pick<InstrumentationStep, "args" | "filter">,
  target: InstrumentationTarget,
  options: InstrumentOptions = {},
): string {
  const words = ["am", "instrument", "-w", "-r"];
  const add = (key: string, value: string) => words.push("-e", shellQuote(key), shellQuote(value));
  if (options.listOnly) add("log", "true");
  // An exact list replaces the filter: it was made from the filtered listing already.
  if (options.testFile !== undefined) add("testFile", options.testFile);
  else if (options.only === undefined) for (const [key, value] of filterArgs(step.filter)) add(key, value);
  for (const [key, value] of Object.entries(step.args ?? {})) add(key, value);
  // Last, so that it wins over a `class` among the plan's own args (am keeps the last value of a key).
  if (options.only !== undefined) add("class", singleTestSpec(options.only));
  words.push(shellQuote(`${target.testPackage}/${target.runner}`));
  return words.join(" ");
}

/**
 * `Class#method` for one test. AndroidJUnitRunner's method filter compares the method name without a
 * parameterized test's index suffix ("signsIn[2]" → "signsIn"; older runners compare only that), so the
 * suffix is dropped: every index of the method runs, and the caller keeps the result of the one it wanted.
 * Other bracketed names ("signsIn[user=ann]") are not indices and are passed whole.
 */
export function singleTestSpec(test: { classname: string; name: string }): string {
  return `${test.classname}#${test.name.replace(/(.)\[[0-9]+\]$/, "$1")}`;
}

/**
 * The contents of a testFile: one `Class#method` per line. AndroidJUnitRunner's RunnerArgs reads a line as a
 * class or method only when it matches its CLASS_OR_METHOD_REGEX (`pkg.Class#method`, the method a Java
 * identifier) and as a package otherwise, so a parameterized index (`m[2]`) cannot be named: the method is,
 * once (every index runs, and the caller keeps the results of the ones it asked for).
 */
export function testFileContents(tests: ReadonlyArray<{ classname: string; name: string }>): string {
  return [...new Set(tests.map((test) => `${singleTestSpec(test)}\n`))].join("");
}
