import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR } from "../steps/test-context.ts";
import { enumerateTestsArgs, parseEnumeration, testWithoutBuildingArgs } from "./xcodebuild-args.ts";

const target = { xctestrun: "/w/tests/App_iphonesimulator17.5-arm64.xctestrun", udid: "UDID-1" };

describe("testWithoutBuildingArgs", () => {
  it("runs the xctestrun on the device into the result bundle, with the step's only and skip testing", () => {
    expect(
      testWithoutBuildingArgs(target, "/w/r.xcresult", {
        onlyTesting: ["AppUITests/LoginTests"],
        skipTesting: ["AppUITests/LoginTests/testSlow"],
      }),
    ).toEqual([
      "test-without-building",
      "-xctestrun",
      "/w/tests/App_iphonesimulator17.5-arm64.xctestrun",
      "-destination",
      "id=UDID-1",
      "-resultBundlePath",
      "/w/r.xcresult",
      "-only-testing:AppUITests/LoginTests",
      "-skip-testing:AppUITests/LoginTests/testSlow",
    ]);
  });

  it("runs an exact list (a batch, a rerun) in place of only_testing, keeping skip_testing", () => {
    const args = testWithoutBuildingArgs(target, "/w/r.xcresult", {
      onlyTesting: ["AppUITests"],
      skipTesting: ["AppUITests/CartTests"],
      exact: [
        { classname: "AppUITests.LoginTests", name: "testSignsIn" },
        { classname: "AppUITests.LoginTests", name: "testRejects" },
      ],
    });
    expect(args.filter((a) => a.startsWith("-only-testing:") || a.startsWith("-skip-testing:"))).toEqual([
      "-only-testing:AppUITests/LoginTests/testSignsIn",
      "-only-testing:AppUITests/LoginTests/testRejects",
      "-skip-testing:AppUITests/CartTests",
    ]);
  });
});

describe("enumerateTestsArgs", () => {
  it("lists the tests as flat JSON into a file, with the step's filters", () => {
    expect(enumerateTestsArgs(target, "/w/listed.json", { onlyTesting: ["AppUITests"] })).toEqual([
      "test-without-building",
      "-enumerate-tests",
      "-test-enumeration-format",
      "json",
      "-test-enumeration-style",
      "flat",
      "-test-enumeration-output-path",
      "/w/listed.json",
      "-xctestrun",
      "/w/tests/App_iphonesimulator17.5-arm64.xctestrun",
      "-destination",
      "id=UDID-1",
      "-only-testing:AppUITests",
    ]);
  });
});

describe("parseEnumeration", () => {
  it("reads the enabled tests of a recorded flat listing", () => {
    const text = readFileSync(join(FIXTURES_DIR, "apple", "xcodebuild-enumerate-tests-flat.json"), "utf8");
    const parsed = parseEnumeration(text);
    expect(parsed).toEqual({
      tests: [1, 2, 3, 4, 5, 6].map((n) => ({ classname: "Target.Class", name: `test${n}` })),
    });
  });

  it("drops Swift's parentheses, duplicates and rows that are not tests; leaves out disabled tests", () => {
    const parsed = parseEnumeration(
      JSON.stringify({
        errors: [],
        values: [
          {
            enabledTests: [
              { identifier: "AppUITests/LoginTests/testSignsIn()" },
              { identifier: "AppUITests/LoginTests/testSignsIn" },
              { identifier: "AppUITests" },
            ],
            disabledTests: [{ identifier: "AppUITests/LoginTests/testOff()" }],
          },
        ],
      }),
    );
    expect(parsed).toEqual({ tests: [{ classname: "AppUITests.LoginTests", name: "testSignsIn" }] });
  });

  it("fails on errors and on what is not a listing", () => {
    expect(parseEnumeration(JSON.stringify({ errors: ["bundle failed to load"], values: [] }))).toEqual({
      error: "xcodebuild could not list the tests: bundle failed to load",
    });
    expect(parseEnumeration("not json")).toMatchObject({ error: expect.stringContaining("not JSON") });
    expect(parseEnumeration("{}")).toEqual({ error: "the test listing has no values" });
  });
});
