import { describe, expect, it } from "vitest";
import { amInstrumentCommand, filterArgs, singleTestSpec, testFileContents } from "./am-instrument.ts";

const target = { testPackage: "com.example.basic.test", runner: "androidx.test.runner.AndroidJUnitRunner" };

describe("amInstrumentCommand", () => {
  it("runs the test package's runner, raw and waiting", () => {
    expect(amInstrumentCommand({}, target)).toBe(
      "am instrument -w -r 'com.example.basic.test/androidx.test.runner.AndroidJUnitRunner'",
    );
  });

  it("lists without running with -e log true, keeping the filter", () => {
    expect(amInstrumentCommand({ filter: { size: "small" } }, target, { listOnly: true })).toBe(
      "am instrument -w -r -e 'log' 'true' -e 'size' 'small' 'com.example.basic.test/androidx.test.runner.AndroidJUnitRunner'",
    );
  });

  it("quotes every value from the plan for the device's shell", () => {
    const command = amInstrumentCommand({ args: { user: "ann's; rm -rf /" } }, target);
    expect(command).toContain(`-e 'user' 'ann'\\''s; rm -rf /'`);
  });

  it("runs an exact list from a test file instead of the filter", () => {
    const command = amInstrumentCommand({ filter: { classes: ["a.B"] } }, target, {
      testFile: "/data/local/tmp/tests.txt",
    });
    expect(command).toContain("-e 'testFile' '/data/local/tmp/tests.txt'");
    expect(command).not.toContain("'class'");
  });

  it("reruns one test alone with -e class Class#method in place of the filter, after the plan's args", () => {
    const command = amInstrumentCommand(
      { filter: { packages: ["a"] }, args: { class: "a.Other", user: "ann" } },
      target,
      { only: { classname: "a.LoginTest", name: "signsIn" } },
    );
    expect(command).toBe(
      "am instrument -w -r -e 'class' 'a.Other' -e 'user' 'ann' -e 'class' 'a.LoginTest#signsIn' 'com.example.basic.test/androidx.test.runner.AndroidJUnitRunner'",
    );
  });
});

describe("singleTestSpec", () => {
  it("drops a parameterized test's index, which the runner's method filter does not compare", () => {
    expect(singleTestSpec({ classname: "a.T", name: "signsIn[2]" })).toBe("a.T#signsIn");
    expect(singleTestSpec({ classname: "a.T", name: "signsIn[user=ann]" })).toBe("a.T#signsIn[user=ann]");
    expect(singleTestSpec({ classname: "a.T", name: "[3]" })).toBe("a.T#[3]");
  });
});

describe("filterArgs", () => {
  it("maps each filter to its runner argument, lists comma-joined", () => {
    expect(
      filterArgs({
        classes: ["a.LoginTest", "a.CartTest#addsItem"],
        packages: ["a.checkout"],
        annotations: ["androidx.test.filters.SmallTest"],
        not_annotations: ["androidx.test.filters.FlakyTest", "a.Slow"],
        size: "medium",
      }),
    ).toEqual([
      ["class", "a.LoginTest,a.CartTest#addsItem"],
      ["package", "a.checkout"],
      ["annotation", "androidx.test.filters.SmallTest"],
      ["notAnnotation", "androidx.test.filters.FlakyTest,a.Slow"],
      ["size", "medium"],
    ]);
    expect(filterArgs(undefined)).toEqual([]);
  });
});

describe("testFileContents", () => {
  it("writes one Class#method per line, a parameterized method once without its index", () => {
    // RunnerArgs would read "a.D#e[1]" as a package name (it does not match CLASS_OR_METHOD_REGEX).
    expect(
      testFileContents([
        { classname: "a.B", name: "c" },
        { classname: "a.D", name: "e[1]" },
        { classname: "a.D", name: "e[2]" },
      ]),
    ).toBe("a.B#c\na.D#e\n");
  });
});
