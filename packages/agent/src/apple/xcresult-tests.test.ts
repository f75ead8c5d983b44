import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR } from "../steps/test-context.ts";
import { parseTestResults } from "./xcresult-tests.ts";

const fixture = (name: string) => readFileSync(join(FIXTURES_DIR, "apple", name), "utf8");

describe("parseTestResults (xcresulttool get test-results tests, Xcode 16+)", () => {
  it("reads every status of a recorded unit test bundle, with failure messages and durations", () => {
    const parsed = parseTestResults(fixture("xcresulttool-tests-unit-failures.json"));
    expect(parsed).toEqual({
      cases: [
        {
          classname: "RandomStuffTests.RandomStuffTests",
          name: "testExample",
          status: "passed",
          duration_ms: 1,
          message: null,
          details: null,
        },
        expect.objectContaining({ name: "testExample2", status: "passed", duration_ms: 0 }),
        // An expected failure passes; its reason is not a failure message.
        expect.objectContaining({
          name: "testExpectedFailure",
          status: "passed",
          message: null,
          duration_ms: 183,
        }),
        expect.objectContaining({
          name: "testExpectedFailure2",
          status: "failed",
          message:
            "RandomStuffTests.swift:49: Expected failure 'Working on a fix for this problem.' but none recorded",
        }),
        {
          classname: "RandomStuffTests.RandomStuffTests",
          name: "testFoo",
          status: "failed",
          duration_ms: 2,
          message: 'RandomStuffTests.swift:38: XCTAssertEqual failed: ("1") is not equal to ("2")',
          details: null,
        },
        expect.objectContaining({ name: "testPerformanceExample", status: "passed", duration_ms: 253 }),
        expect.objectContaining({
          name: "testSkippedTest",
          status: "skipped",
          message: "Test skipped - Required API is not available for this test.",
        }),
      ],
    });
  });

  it("names UI and unit tests by their bundle and suite, one case per test whatever its configurations", () => {
    const parsed = parseTestResults(fixture("xcresulttool-tests-ui-and-unit.json"));
    if ("error" in parsed) throw new Error(parsed.error);
    expect(parsed.cases.map((c) => `${c.classname}#${c.name} ${c.status} ${c.duration_ms}`)).toEqual([
      "RandomStuffUITests.RandomStuffUITestsLaunchTests#testLaunch passed 16215",
      "RandomStuffUITests.RandomStuffUITests#testExample passed 6087",
      "RandomStuffUITests.RandomStuffUITests#testLaunchPerformance passed 74326",
      "RandomStuffTests.RandomStuffTests#testExample passed 1",
      "RandomStuffTests.RandomStuffTests#testPerformanceExample passed 3168",
    ]);
  });

  it("reads the localized duration text when there is no durationInSeconds", () => {
    const node = (duration: string) => ({
      testNodes: [
        {
          nodeType: "UI test bundle",
          name: "AppUITests",
          children: [
            {
              nodeType: "Test Suite",
              name: "LoginTests",
              children: [
                {
                  nodeType: "Test Case",
                  name: "testA()",
                  nodeIdentifier: "LoginTests/testA()",
                  result: "Passed",
                  duration,
                },
              ],
            },
          ],
        },
      ],
    });
    const durations = ["0,0021s", "1m 14s", "16s", "soon"].map((d) => {
      const parsed = parseTestResults(JSON.stringify(node(d)));
      return "cases" in parsed ? parsed.cases[0]?.duration_ms : undefined;
    });
    expect(durations).toEqual([2, 74_000, 16_000, null]);
  });

  it("takes a result it does not know for an error, and what is not JSON for a failure to read", () => {
    const parsed = parseTestResults(
      JSON.stringify({
        testNodes: [
          {
            nodeType: "Unit test bundle",
            name: "AppTests",
            children: [
              { nodeType: "Test Case", name: "testX()", nodeIdentifier: "Suite/testX()", result: "unknown" },
            ],
          },
        ],
      }),
    );
    expect(parsed).toEqual({
      cases: [
        {
          classname: "AppTests.Suite",
          name: "testX",
          status: "errored",
          duration_ms: null,
          message: "xcresulttool could not tell this test's result",
          details: null,
        },
      ],
    });
    expect(parseTestResults("Error: not a result bundle")).toMatchObject({ error: expect.any(String) });
    expect(parseTestResults("{}")).toEqual({ error: "xcresulttool's test results have no testNodes" });
  });
});
