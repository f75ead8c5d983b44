/**
 * How an XCTest test is named on each side. xcodebuild names it "Target/Class/method" (its -only-testing:
 * form; listings and results add "()" to Swift methods); Testbay's test cases have a classname and a name,
 * which become "Target.Class" and "method" (the JUnit form Xcode's own converters use), so one test has one
 * identity whether it was listed, run, rerun or handed over in a shard's batch. A target name with a "." in it
 * cannot be told apart from its class and is not supported.
 */
import type { TestRef } from "../steps/retry-failed-tests.ts";

/** "testSignsIn()" → "testSignsIn": Swift's parentheses are not part of the method's identity. */
export function methodName(name: string): string {
  return name.endsWith("()") ? name.slice(0, -2) : name;
}

export function testRef(target: string, className: string, method: string): TestRef {
  return { classname: `${target}.${className}`, name: methodName(method) };
}

/** "AppUITests/LoginTests/testSignsIn()" → {classname "AppUITests.LoginTests", name "testSignsIn"}. */
export function refFromIdentifier(identifier: string): TestRef | null {
  const parts = identifier.split("/");
  if (parts.length !== 3 || parts.some((p) => p === "")) return null;
  const [target, className, method] = parts as [string, string, string];
  return testRef(target, className, method);
}

/** The -only-testing: form of a test: "AppUITests/LoginTests/testSignsIn". */
export function xcodeIdentifier(test: TestRef): string {
  const dot = test.classname.indexOf(".");
  if (dot <= 0) return `${test.classname}/${test.name}`;
  return `${test.classname.slice(0, dot)}/${test.classname.slice(dot + 1)}/${test.name}`;
}
