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

describe("issue 29's runner arguments (API.md §14)", () => {
  it("adds the plan's environment as -e pairs after the filter, with notClass and notPackage", () => {
    expect(
      amInstrumentCommand(
        {
          filter: { packages: ["a"], not_classes: ["a.SlowTest"], not_packages: ["a.flaky"] },
          environment: { clearPackageData: "true", "user.name": "ann" },
        },
        target,
      ),
    ).toBe(
      "am instrument -w -r -e 'notClass' 'a.SlowTest' -e 'package' 'a' -e 'notPackage' 'a.flaky' -e 'clearPackageData' 'true' -e 'user.name' 'ann' 'com.example.basic.test/androidx.test.runner.AndroidJUnitRunner'",
    );
  });

  it("asks for coverage in one file, or a directory of files", () => {
    expect(
      amInstrumentCommand({}, target, { coverage: { file: "/sdcard/Download/testbay-2.ec" } }),
    ).toContain("-e 'coverage' 'true' -e 'coverageFile' '/sdcard/Download/testbay-2.ec'");
    expect(
      amInstrumentCommand({}, target, { coverage: { dir: "/sdcard/Download/testbay-coverage/" } }),
    ).toContain("-e 'coverage' 'true' -e 'coverageFilePath' '/sdcard/Download/testbay-coverage/'");
  });

  it("runs the always_run tests by name, and leaves them out of the filtered run", () => {
    const first = amInstrumentCommand({ filter: { packages: ["a"] } }, target, {
      classes: ["a.SetupTest", "a.B#m"],
    });
    expect(first).toContain("-e 'class' 'a.SetupTest,a.B#m'");
    expect(first).not.toContain("'package'");
    const rest = amInstrumentCommand({ filter: { not_classes: ["a.C"] } }, target, {
      notClasses: ["a.SetupTest"],
    });
    expect(rest).toContain("-e 'notClass' 'a.C,a.SetupTest'");
  });

  it("runs through the orchestrator with the documented command, the runner as targetInstrumentation", () => {
    expect(
      amInstrumentCommand({ environment: { user: "ann" } }, target, {
        only: { classname: "a.LoginTest", name: "signsIn" },
        orchestrator: { clearPackageData: true },
      }),
    ).toBe(
      "CLASSPATH=$(pm path androidx.test.services) app_process / androidx.test.services.shellexecutor.ShellMain am instrument -r -w -e targetInstrumentation 'com.example.basic.test/androidx.test.runner.AndroidJUnitRunner' -e clearPackageData true -e 'user' 'ann' -e 'class' 'a.LoginTest#signsIn' androidx.test.orchestrator/.AndroidTestOrchestrator",
    );
  });

  it("does not say clearPackageData twice when the environment says it", () => {
    const command = amInstrumentCommand({ environment: { clearPackageData: "true" } }, target, {
      orchestrator: { clearPackageData: true },
    });
    expect(command.match(/clearPackageData/g)).toHaveLength(1);
  });

  it("keeps an exact list (testFile) under the orchestrator, which collects through the runner", () => {
    expect(
      amInstrumentCommand({ filter: { classes: ["a.B"] } }, target, {
        testFile: "/data/local/tmp/testbay-batch-1.txt",
        orchestrator: { clearPackageData: false },
      }),
    ).toMatch(
      /-e 'testFile' '\/data\/local\/tmp\/testbay-batch-1\.txt' androidx\.test\.orchestrator\/\.AndroidTestOrchestrator$/,
    );
  });
});
