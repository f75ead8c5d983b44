/**
 * The test cases of a result bundle before Xcode 16, from the "legacy" object graph: `xcresulttool get
 * --format json --path R` prints the ActionsInvocationRecord (whose issues hold each failure's message, by
 * "Class.method()" and target) and the id of the test summaries, which a second call with `--id` prints:
 * testable summaries (one per test target) of nested groups whose leaves are ActionTestMetadata. Every value
 * is wrapped as {"_value": …} and every list as {"_values": […]}.
 */
import type { TestCase, TestCaseStatus } from "../steps/step-types.ts";
import { methodName, testRef } from "./test-identifiers.ts";
import type { ParsedResults } from "./xcresult-tests.ts";

type Wrapped = Record<string, unknown>;

function value(node: unknown, key: string): string | null {
  const field = (node as Wrapped | null)?.[key] as { _value?: unknown } | undefined;
  return typeof field?._value === "string" ? field._value : null;
}

function values(node: unknown, key: string): Wrapped[] {
  const field = (node as Wrapped | null)?.[key] as { _values?: unknown } | undefined;
  return Array.isArray(field?._values) ? (field._values as Wrapped[]) : [];
}

export interface LegacyRoot {
  /** The id to pass to `get --id` for the test summaries; null when the bundle ran no tests. */
  testsRef: string | null;
  /** Failure messages by "Target#Class.method()" as the issues name them. */
  failures: Map<string, string[]>;
}

export function parseLegacyRoot(text: string): LegacyRoot | { error: string } {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { error: `xcresulttool printed no JSON: ${(error as Error).message}` };
  }
  let testsRef: string | null = null;
  for (const action of values(json, "actions")) {
    const ref = (action.actionResult as Wrapped | undefined)?.testsRef as Wrapped | undefined;
    const id = value(ref, "id");
    if (id !== null) {
      testsRef = id;
      break;
    }
  }
  const failures = new Map<string, string[]>();
  // The record's own issues, and each action's (where Xcode puts them for a test action): the same failure
  // may be in both, and is kept once.
  const issues = [
    (json as Wrapped | null)?.issues,
    ...values(json, "actions").map((action) => (action.actionResult as Wrapped | undefined)?.issues),
  ];
  for (const failure of issues.flatMap((summaries) => values(summaries, "testFailureSummaries"))) {
    const testCaseName = value(failure, "testCaseName");
    const message = value(failure, "message");
    if (testCaseName === null || message === null) continue;
    const key = `${value(failure, "producingTarget") ?? ""}#${normalizedCaseName(testCaseName)}`;
    const known = failures.get(key) ?? [];
    if (!known.includes(message)) failures.set(key, [...known, message]);
  }
  return { testsRef, failures };
}

/** "LoginTests.testRejects()" and "-[LoginTests testRejects]" (Objective-C) → "LoginTests.testRejects". */
function normalizedCaseName(name: string): string {
  const objc = /^-\[(\S+) (\S+)\]$/.exec(name);
  if (objc) return `${objc[1]}.${objc[2]}`;
  return methodName(name);
}

export function parseLegacyTests(text: string, root: LegacyRoot): ParsedResults {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { error: `xcresulttool printed no JSON: ${(error as Error).message}` };
  }
  const cases: TestCase[] = [];
  const walk = (node: Wrapped, target: string) => {
    const status = value(node, "testStatus");
    if (status !== null) {
      const identifier = value(node, "identifier") ?? "";
      const parts = identifier.split("/");
      const method = methodName(value(node, "name") ?? parts.at(-1) ?? "");
      const className = parts.length >= 2 ? (parts.at(-2) as string) : target;
      const ref = testRef(target, className, method);
      const messages =
        root.failures.get(`${target}#${className}.${method}`) ??
        root.failures.get(`#${className}.${method}`) ??
        [];
      const duration = Number(value(node, "duration"));
      const mapped = legacyStatus(status);
      cases.push({
        classname: ref.classname,
        name: ref.name,
        status: mapped,
        duration_ms: Number.isFinite(duration) ? Math.round(duration * 1000) : null,
        message: messages[0] ?? (mapped === "errored" ? `test status ${status}` : null),
        details: messages.length > 1 ? messages.join("\n") : null,
      });
      return;
    }
    for (const child of [...values(node, "subtests"), ...values(node, "tests")]) walk(child, target);
  };
  for (const summary of values(json, "summaries")) {
    for (const testable of values(summary, "testableSummaries")) {
      const target = value(testable, "targetName") ?? value(testable, "name") ?? "";
      for (const test of values(testable, "tests")) walk(test, target);
    }
  }
  return { cases };
}

function legacyStatus(status: string): TestCaseStatus {
  switch (status) {
    case "Success":
    case "Expected Failure":
      return "passed";
    case "Failure":
      return "failed";
    case "Skipped":
      return "skipped";
    default:
      return "errored";
  }
}
