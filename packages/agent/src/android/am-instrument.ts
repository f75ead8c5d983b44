/**
 * The `am instrument` command lines of an instrumentation step, built for the device's shell (every value
 * from a plan is quoted there). AndroidJUnitRunner's arguments: `-e log true` lists the tests without
 * running them; `-e class`, `-e notClass`, `-e package`, `-e notPackage`, `-e annotation`, `-e notAnnotation`
 * take comma-separated lists; `-e testFile` names a device file with one Class or Class#method per line, for
 * exact lists too long for a command line. A test rerun alone (retry_failed_tests) is `-e class Class#method`.
 * Under AndroidX Test Orchestrator (API.md §14) the same arguments go to the orchestrator, which passes all
 * but its own to the target instrumentation it starts once per test (orchestrator-command.ts).
 */
import type { FullInstrumentationStep, InstrumentationFilter } from "../steps/instrumentation-options.ts";
import { shellQuote } from "../steps/shell-quote.ts";
import { orchestratedCommand } from "./orchestrator-command.ts";

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
  /** Tests (`Class` or `Class#method`) to run, in place of the filter: the step's always_run ones. */
  classes?: readonly string[];
  /** Tests to leave out of a run that uses the filter (`-e notClass`): the always_run ones, run before. */
  notClasses?: readonly string[];
  /** Through AndroidX Test Orchestrator (use_orchestrator), with `-e clearPackageData true` when asked. */
  orchestrator?: { clearPackageData: boolean };
  /** `-e coverage true` and where the runner writes it: one file, or a directory (orchestrator: a file per test). */
  coverage?: { file: string } | { dir: string };
}

type CommandStep = Pick<FullInstrumentationStep, "args" | "environment"> & { filter?: InstrumentationFilter };

/** The plan's filter as runner arguments, in a fixed order. */
export function filterArgs(
  filter: InstrumentationFilter | undefined,
  notClasses: readonly string[] = [],
): Array<[string, string]> {
  const args: Array<[string, string]> = [];
  if (filter?.classes) args.push(["class", filter.classes.join(",")]);
  const not = [...(filter?.not_classes ?? []), ...notClasses];
  if (not.length > 0) args.push(["notClass", not.join(",")]);
  if (!filter) return args;
  if (filter.packages) args.push(["package", filter.packages.join(",")]);
  if (filter.not_packages) args.push(["notPackage", filter.not_packages.join(",")]);
  if (filter.annotations) args.push(["annotation", filter.annotations.join(",")]);
  if (filter.not_annotations) args.push(["notAnnotation", filter.not_annotations.join(",")]);
  if (filter.size) args.push(["size", filter.size]);
  return args;
}

/** The runner arguments of one run, in the order they are given (am keeps the last value of a key). */
export function instrumentArgs(step: CommandStep, options: InstrumentOptions = {}): Array<[string, string]> {
  const args: Array<[string, string]> = [];
  if (options.listOnly) args.push(["log", "true"]);
  // An exact list replaces the filter: it was made from the filtered listing already.
  if (options.testFile !== undefined) args.push(["testFile", options.testFile]);
  else if (options.classes !== undefined) args.push(["class", options.classes.join(",")]);
  else if (options.only === undefined) args.push(...filterArgs(step.filter, options.notClasses));
  for (const [key, value] of Object.entries(step.environment ?? {})) args.push([key, value]);
  for (const [key, value] of Object.entries(step.args ?? {})) args.push([key, value]);
  if (options.coverage !== undefined) {
    args.push(["coverage", "true"]);
    if ("file" in options.coverage) args.push(["coverageFile", options.coverage.file]);
    else args.push(["coverageFilePath", options.coverage.dir]);
  }
  // Last, so that it wins over a `class` among the plan's own args.
  if (options.only !== undefined) args.push(["class", singleTestSpec(options.only)]);
  return args;
}

export function amInstrumentCommand(
  step: CommandStep,
  target: InstrumentationTarget,
  options: InstrumentOptions = {},
): string {
  const args = instrumentArgs(step, options);
  if (options.orchestrator) return orchestratedCommand(target, args, options.orchestrator);
  const words = ["am", "instrument", "-w", "-r"];
  for (const [key, value] of args) words.push("-e", shellQuote(key), shellQuote(value));
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
