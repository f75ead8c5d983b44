import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR } from "../steps/test-context.ts";
import { parseLegacyRoot, parseLegacyTests } from "./xcresult-legacy.ts";

const fixture = (name: string) => readFileSync(join(FIXTURES_DIR, "apple", name), "utf8");

describe("legacy result bundles, recorded (Xcode 15)", () => {
  it("finds the tests' id in the record and reads the test of the summaries it names", () => {
    const root = parseLegacyRoot(fixture("xcresulttool-legacy-root.json"));
    if ("error" in root) throw new Error(root.error);
    const idFromFile = JSON.parse(fixture("xcresulttool-legacy-root.json")).actions._values[0].actionResult
      .testsRef.id._value;
    expect(root.testsRef).toBe(idFromFile);
    const parsed = parseLegacyTests(fixture("xcresulttool-legacy-tests-ref.json"), root);
    expect(parsed).toEqual({
      cases: [
        {
          classname: "UITestScreenshotUITests.UITestScreenshotUITests",
          name: "testLaunch",
          status: "passed",
          duration_ms: 214,
          message: null,
          details: null,
        },
      ],
    });
  });
});

// Shaped after the legacy JSON flutter's tools test with (flutter/flutter,
// packages/flutter_tools/test/general.shard/ios/xcresult_test_data.dart at
// b269a7089b9bb290fbd2c64ac10264f107c61801, BSD-3-Clause: recorded `xcresulttool get --format json` output):
// every value wrapped as {_value}, every list as {_values}, groups nested under "All tests" → bundle → class.
const v = (value: string) => ({ _type: { _name: "String" }, _value: value });
const list = (...items: object[]) => ({ _type: { _name: "Array" }, _values: items });
const test = (identifier: string, status: string, duration: string) => ({
  _type: { _name: "ActionTestMetadata" },
  duration: { _type: { _name: "Double" }, _value: duration },
  identifier: v(identifier),
  name: v(identifier.split("/")[1] as string),
  testStatus: v(status),
});
const group = (name: string, ...subtests: object[]) => ({
  _type: { _name: "ActionTestSummaryGroup" },
  identifier: v(name),
  name: v(name),
  subtests: list(...subtests),
});
const failure = (testCaseName: string, message: string) => ({
  _type: { _name: "TestFailureIssueSummary" },
  message: v(message),
  testCaseName: v(testCaseName),
  producingTarget: v("ShopUITests"),
});

const root = {
  _type: { _name: "ActionsInvocationRecord" },
  actions: list({
    actionResult: {
      issues: { testFailureSummaries: list(failure("LoginTests.testRejects()", "XCTAssertTrue failed")) },
      testsRef: { id: v("0~tests-ref") },
    },
  }),
  issues: {
    testFailureSummaries: list(
      failure("LoginTests.testRejects()", "XCTAssertTrue failed"),
      failure("-[CartTests testCrashes]", "Test crashed with signal kill."),
    ),
  },
};

const tests = {
  _type: { _name: "ActionTestPlanRunSummaries" },
  summaries: list({
    testableSummaries: list({
      targetName: v("ShopUITests"),
      tests: list(
        group(
          "All tests",
          group(
            "ShopUITests.xctest",
            group(
              "LoginTests",
              test("LoginTests/testSignsIn()", "Success", "1.25"),
              test("LoginTests/testRejects()", "Failure", "0.5"),
            ),
            group(
              "CartTests",
              test("CartTests/testCrashes", "Failure", "2"),
              test("CartTests/testOld()", "Skipped", "0"),
            ),
          ),
        ),
      ),
    }),
  }),
};

describe("legacy result bundles (before Xcode 16)", () => {
  it("finds the test summaries' id and each failure's message, once", () => {
    const parsed = parseLegacyRoot(JSON.stringify(root));
    if ("error" in parsed) throw new Error(parsed.error);
    expect(parsed.testsRef).toBe("0~tests-ref");
    expect(parsed.failures.get("ShopUITests#LoginTests.testRejects")).toEqual(["XCTAssertTrue failed"]);
    expect(parsed.failures.get("ShopUITests#CartTests.testCrashes")).toEqual([
      "Test crashed with signal kill.",
    ]);
  });

  it("reads each test of the nested groups with its status, duration and message", () => {
    const parsedRoot = parseLegacyRoot(JSON.stringify(root));
    if ("error" in parsedRoot) throw new Error(parsedRoot.error);
    expect(parseLegacyTests(JSON.stringify(tests), parsedRoot)).toEqual({
      cases: [
        {
          classname: "ShopUITests.LoginTests",
          name: "testSignsIn",
          status: "passed",
          duration_ms: 1250,
          message: null,
          details: null,
        },
        {
          classname: "ShopUITests.LoginTests",
          name: "testRejects",
          status: "failed",
          duration_ms: 500,
          message: "XCTAssertTrue failed",
          details: null,
        },
        {
          classname: "ShopUITests.CartTests",
          name: "testCrashes",
          status: "failed",
          duration_ms: 2000,
          message: "Test crashed with signal kill.",
          details: null,
        },
        {
          classname: "ShopUITests.CartTests",
          name: "testOld",
          status: "skipped",
          duration_ms: 0,
          message: null,
          details: null,
        },
      ],
    });
  });

  it("has no tests when the bundle ran none, and fails on what is not JSON", () => {
    const parsed = parseLegacyRoot(JSON.stringify({ actions: list({ actionResult: {} }) }));
    expect(parsed).toEqual({ testsRef: null, failures: new Map() });
    expect(parseLegacyRoot("Error: …")).toMatchObject({ error: expect.any(String) });
  });
});
