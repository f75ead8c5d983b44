// Tests rerun alone within an attempt (retry_failed_tests) as GET /executions/{id}/tests and the JUnit report
// show them: one test each, its final try's status, every try kept; Surefire's rerun elements in the XML.
import { describe, expect, it } from "vitest";
import type { TestCaseStatus } from "../../db/schema.ts";
import type { DeviceRunRecord } from "./executions.repo.ts";
import { exceptionType, junitReport } from "./junit-report.ts";
import type { StoredTestCase } from "./results.repo.ts";
import { sampleDeviceRun, sampleExecution } from "./sample-records.fixture.ts";
import { inTryOrder, testCaseViews } from "./test-case-view.ts";

const run = sampleDeviceRun({
  claimedDevice: { platform: "android", serial: "emulator-5554", model: "Pixel 7", os_version: "14" },
});

const execution = (runs: DeviceRunRecord[] = [run]) => sampleExecution({ deviceRuns: runs });

let seq = 0;
function tried(name: string, status: TestCaseStatus, retry: number | null, attempt = 1): StoredTestCase {
  seq++;
  const failed = status === "failed" || status === "errored";
  return {
    deviceRunId: "dr_1",
    attempt,
    stepIndex: 0,
    classname: "com.example.LoginTest",
    name,
    status,
    durationMs: 1000 + seq,
    message: failed ? `${name} try ${retry} ${status}` : null,
    details: failed
      ? `${status === "failed" ? "java.lang.AssertionError" : "java.lang.IllegalStateException"}: ${name} try ${retry}\n\tat com.example.LoginTest.${name}(LoginTest.kt:42)`
      : null,
    artifacts: failed
      ? [`device-emulator-5554/screenshots/com.example.LoginTest.${name}.retry-${retry}.png`]
      : [],
    videoOffsetMs: null,
    retry,
  };
}

describe("GET /executions/{id}/tests with tests rerun alone", () => {
  it("is one item per test with its last try's status, flaky when it passed after failing, every try kept", () => {
    const cases = [
      tried("signsIn", "passed", 0),
      tried("rejects", "failed", 0),
      tried("broken", "failed", 0),
      tried("rejects", "passed", 1),
      tried("broken", "errored", 1),
      tried("broken", "failed", 2),
    ];
    const views = testCaseViews(execution(), cases);
    expect(views.map((v) => [v.name, v.status, v.flaky])).toEqual([
      ["signsIn", "passed", false],
      ["rejects", "passed", true],
      ["broken", "failed", false],
    ]);
    const rejects = views[1];
    expect(rejects?.attempts).toEqual([
      {
        attempt: 1,
        retry: 0,
        status: "failed",
        duration_ms: cases[1]?.durationMs,
        message: "rejects try 0 failed",
        artifacts: ["device-emulator-5554/screenshots/com.example.LoginTest.rejects.retry-0.png"],
      },
      {
        attempt: 1,
        retry: 1,
        status: "passed",
        duration_ms: cases[3]?.durationMs,
        message: null,
        artifacts: [],
      },
    ]);
    // The item's own fields are its final try's.
    expect(rejects).toMatchObject({
      attempt: 1,
      duration_ms: cases[3]?.durationMs,
      message: null,
      artifacts: [],
    });
    expect(views[2]?.attempts.map((t) => [t.retry, t.status])).toEqual([
      [0, "failed"],
      [1, "errored"],
      [2, "failed"],
    ]);
  });

  it("orders tries by attempt then retry, numbering those an agent did not number in the order reported", () => {
    const cases = [
      tried("a", "passed", 1, 2),
      tried("a", "failed", null, 1),
      tried("a", "failed", 0, 2),
      tried("a", "passed", null, 1),
    ];
    expect(inTryOrder(cases).map((c) => [c.attempt, c.retry, c.status])).toEqual([
      [1, 0, "failed"],
      [1, 1, "passed"],
      [2, 0, "failed"],
      [2, 1, "passed"],
    ]);
    const [view] = testCaseViews(execution([{ ...run, attempt: 2 }]), cases);
    expect(view).toMatchObject({ status: "passed", flaky: true, attempt: 2 });
  });
});

describe("the JUnit report of tests rerun alone (Maven Surefire's rerun schema)", () => {
  const xml = junitReport(execution(), [
    tried("signsIn", "passed", 0),
    tried("rejects", "failed", 0),
    tried("rejects", "errored", 1),
    tried("rejects", "passed", 2),
    tried("broken", "failed", 0),
    tried("broken", "errored", 1),
    tried("broken", "failed", 2),
  ]);

  it("counts distinct tests, each by its final try", () => {
    expect(xml).toContain('<testsuites name="smoke" tests="3" failures="1" errors="0" skipped="0">');
    expect(xml).toContain('tests="3" failures="1" errors="0" skipped="0" timestamp=');
    expect(xml.match(/<testcase /g)).toHaveLength(3);
  });

  it("gives a test that passed on a rerun a flakyFailure or flakyError per failed try, with type and stackTrace", () => {
    const rejects = /<testcase [^>]*name="rejects"[^>]*>([\s\S]*?)<\/testcase>/.exec(xml)?.[1] ?? "";
    expect(rejects).toBe(
      [
        "",
        '      <flakyFailure message="rejects try 0 failed" type="java.lang.AssertionError">',
        "        <stackTrace>java.lang.AssertionError: rejects try 0",
        "\tat com.example.LoginTest.rejects(LoginTest.kt:42)</stackTrace>",
        "      </flakyFailure>",
        '      <flakyError message="rejects try 1 errored" type="java.lang.IllegalStateException">',
        "        <stackTrace>java.lang.IllegalStateException: rejects try 1",
        "\tat com.example.LoginTest.rejects(LoginTest.kt:42)</stackTrace>",
        "      </flakyError>",
        "    ",
      ].join("\n"),
    );
    expect(rejects).not.toContain("<failure");
  });

  it("gives a test that failed every time its first failure and a rerunFailure or rerunError per rerun", () => {
    const broken = /<testcase [^>]*name="broken"[^>]*>([\s\S]*?)<\/testcase>/.exec(xml)?.[1] ?? "";
    expect(broken).toContain(
      '<failure message="broken try 0 failed" type="java.lang.AssertionError">java.lang.AssertionError: broken try 0',
    );
    expect(broken.indexOf("<failure")).toBeLessThan(broken.indexOf("<rerunError"));
    expect(broken.indexOf("<rerunError")).toBeLessThan(broken.indexOf("<rerunFailure"));
    expect(broken.match(/<rerunError message="broken try 1 errored"/g)).toHaveLength(1);
    expect(broken.match(/<rerunFailure message="broken try 2 failed"/g)).toHaveLength(1);
    expect(broken.match(/<stackTrace>/g)).toHaveLength(2);
  });

  it("leaves type out when the details are not a Java stack trace", () => {
    expect(exceptionType("java.lang.AssertionError: expected:<1>")).toBe("java.lang.AssertionError");
    expect(exceptionType("kotlin.UninitializedPropertyAccessException")).toBe(
      "kotlin.UninitializedPropertyAccessException",
    );
    expect(exceptionType('Assertion is false: "Welcome" is visible')).toBeNull();
    expect(exceptionType(null)).toBeNull();
  });
});

describe("the JUnit report of a multi-line failure message", () => {
  it("writes the message's line breaks and tabs as character references, which XML parsers keep in attributes", () => {
    const failing = {
      ...tried("compares", "failed", null),
      message: "expected:<1>\nbut was:<2>\n\tin the second row",
    };
    const xml = junitReport(execution(), [failing]);
    expect(xml).toContain(
      '<failure message="expected:&lt;1&gt;&#10;but was:&lt;2&gt;&#10;&#9;in the second row"',
    );
    // The stack trace is element text, where line breaks are kept as they are.
    expect(xml).toContain(
      'type="java.lang.AssertionError">java.lang.AssertionError: compares try null\n\tat com.example',
    );
  });
});
