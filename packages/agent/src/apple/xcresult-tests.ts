/**
 * The test cases of a result bundle from `xcrun xcresulttool get test-results tests --path R` (Xcode 16+): a
 * tree of nodes (Test Plan → UI/Unit test bundle → Test Suite → Test Case, whose children hold its failure
 * messages, repetitions, devices, arguments). Each Test Case becomes one TestCase named as test-identifiers.ts
 * says; its result decides the status ("Expected Failure" is a pass, a result xcresulttool could not tell is
 * an error).
 */
import type { TestCase, TestCaseStatus } from "../steps/step-types.ts";
import { methodName, testRef } from "./test-identifiers.ts";

interface Node {
  nodeType?: unknown;
  nodeIdentifier?: unknown;
  name?: unknown;
  result?: unknown;
  duration?: unknown;
  durationInSeconds?: unknown;
  details?: unknown;
  children?: unknown;
}

const bundleTypes = new Set(["UI test bundle", "Unit test bundle"]);

export type ParsedResults = { cases: TestCase[] } | { error: string };

export function parseTestResults(text: string): ParsedResults {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    return { error: `xcresulttool printed no JSON: ${(error as Error).message}` };
  }
  const roots = (json as { testNodes?: unknown } | null)?.testNodes;
  if (!Array.isArray(roots)) return { error: "xcresulttool's test results have no testNodes" };
  const cases: TestCase[] = [];
  const walk = (node: Node, bundle: string | null, suite: string | null) => {
    const type = typeof node.nodeType === "string" ? node.nodeType : "";
    const name = typeof node.name === "string" ? node.name : "";
    if (type === "Test Case") {
      const testCase = toTestCase(node, bundle, suite);
      if (testCase) cases.push(testCase);
      return;
    }
    const nextBundle = bundleTypes.has(type) ? bundleName(name) : bundle;
    const nextSuite = type === "Test Suite" ? name : suite;
    for (const child of children(node)) walk(child, nextBundle, nextSuite);
  };
  for (const root of roots as Node[]) walk(root, null, null);
  return { cases };
}

function children(node: Node): Node[] {
  return Array.isArray(node.children) ? (node.children as Node[]) : [];
}

/** "AppUITests.xctest" and "AppUITests" name the same bundle: its target. */
function bundleName(name: string): string {
  return name.endsWith(".xctest") ? name.slice(0, -".xctest".length) : name;
}

function toTestCase(node: Node, bundle: string | null, suite: string | null): TestCase | null {
  const identifier = typeof node.nodeIdentifier === "string" ? node.nodeIdentifier : "";
  const parts = identifier.split("/").filter((p) => p !== "");
  const name = typeof node.name === "string" && node.name !== "" ? node.name : parts.at(-1);
  if (name === undefined) return null;
  // The identifier is "Class/method()" under its bundle (some tools print "Target/Class/method").
  const className = parts.length >= 2 ? (parts.at(-2) as string) : suite;
  const target = parts.length >= 3 ? (parts.at(-3) as string) : bundle;
  if (className === null || className === undefined) return null;
  const ref = testRef(target ?? className, className, methodName(name));
  const messages = collect(node, "Failure Message");
  const status = statusOf(node.result);
  return {
    classname: ref.classname,
    name: ref.name,
    status,
    duration_ms: durationMs(node),
    // An expected failure passes with its reason as a "failure message": a pass has no message.
    message:
      status === "passed"
        ? null
        : (messages[0] ?? (status === "errored" ? "xcresulttool could not tell this test's result" : null)),
    details: status !== "passed" && messages.length > 1 ? messages.join("\n") : null,
  };
}

/** The names of the descendants of one type, in order (repetitions and devices hold their own messages). */
function collect(node: Node, type: string): string[] {
  const found: string[] = [];
  for (const child of children(node)) {
    if (child.nodeType === type && typeof child.name === "string") found.push(child.name);
    else found.push(...collect(child, type));
  }
  return [...new Set(found)];
}

function statusOf(result: unknown): TestCaseStatus {
  switch (result) {
    case "Passed":
    case "Expected Failure":
      return "passed";
    case "Failed":
      return "failed";
    case "Skipped":
      return "skipped";
    default:
      return "errored";
  }
}

/**
 * durationInSeconds when given, else the text form: "0.52s", "1m 14s", and in a comma locale "0,0021s" (the
 * text is localized; the number is not).
 */
function durationMs(node: Node): number | null {
  if (typeof node.durationInSeconds === "number") return Math.round(node.durationInSeconds * 1000);
  if (typeof node.duration !== "string") return null;
  const match = /^(?:(\d+)h\s*)?(?:(\d+)m\s*)?(?:(\d+(?:\.\d+)?)s)?$/.exec(
    node.duration.trim().replace(",", "."),
  );
  if (match === null || match[0] === "") return null;
  const [, h = "0", m = "0", s = "0"] = match;
  return Math.round((Number(h) * 3600 + Number(m) * 60 + Number(s)) * 1000);
}
