import { XMLParser } from "fast-xml-parser";
import { describe, expect, it } from "vitest";
import type { Execution } from "../sdk/models.ts";
import { junitReport } from "./junit.ts";

function execution(id: string, devices: Execution["devices"], status: Execution["status"]): Execution {
  return {
    id,
    kind: "run",
    name: "Smoke",
    test_plan_id: `tp_${id}`,
    package_name: "com.example",
    version: "1.0",
    status,
    cancel_requested: false,
    created_at: "2026-01-01T00:00:00.000Z",
    started_at: "2026-01-01T00:00:00.000Z",
    finished_at: "2026-01-01T00:01:00.000Z",
    summary: { tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 },
    ci: null,
    priority: "normal",
    triggered_by: { type: "client", id: "cl_ci", name: null },
    client_result: null,
    waiting_reason: null,
    devices,
    steps: [],
  };
}

const run = (status: Execution["status"], model?: string) => ({
  device: model ? { platform: "android" as const, model } : null,
  status,
  attempt: 1,
  started_at: "2026-01-01T00:00:00.000Z",
  finished_at: "2026-01-01T00:00:30.500Z",
  reason: null,
  summary: null,
  agent_id: null,
  claimed_device: null,
  shard: 0,
  steps: [],
});

/** A report as GET /executions/{id}/junit answers it: `<testsuites {root}>` around the lines of its suites. */
const serverReport = (root: string, ...suites: string[]) =>
  ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites ${root}>`, ...suites, "</testsuites>", ""].join(
    "\n",
  );

describe("the merged JUnit report", () => {
  it("has one testsuite per execution and one testcase per device run, failure for failed, error for the rest", () => {
    const report = junitReport(
      [
        execution("a", [run("passed", "Pixel 8"), run("failed", "Pixel 6")], "failed"),
        execution("b", [run("errored")], "errored"),
        execution("c", [run("cancelled"), run("queued")], "cancelled"),
      ],
      new Map([["tp_a", "smoke & sanity"]]),
    );
    expect(report).toContain('<testsuites name="testbay" tests="5" failures="1" errors="3">');
    expect(report.match(/<testsuite /g)).toHaveLength(3);
    expect(report.match(/<testcase /g)).toHaveLength(5);
    expect(report).toContain('<testsuite name="smoke &amp; sanity (tp_a)" id="a"');
    expect(report).toContain('name="device 1: Pixel 8 android, attempt 1" time="30.500"/>');
    expect(report).toMatch(/name="device 2: Pixel 6 android, attempt 1"[^>]*>\s*<failure type="failed"/);
    expect(report).toMatch(/name="agent host, attempt 1"[^>]*>\s*<error type="errored"/);
    expect(report).toContain('<error type="cancelled" message="cancelled">');
    expect(report).toContain('<error type="queued" message="still queued when the wait ended">');
  });

  it("takes the suites the agents reported for an execution, renamed after its plan, and counts their tests", () => {
    const server = serverReport(
      'name="smoke" tests="2" failures="1" errors="0" skipped="0"',
      '  <testsuite name="agent host (attempt 1)" tests="2" failures="1" errors="0" skipped="0">',
      '    <testcase classname="inspect" name="debuggable is false" time="0.000"/>',
      '    <testcase classname="inspect" name="min_sdk ≤ 21" time="0.000">',
      '      <failure message="minSdk is 24, expected at most 21"></failure>',
      "    </testcase>",
      "  </testsuite>",
    );
    const report = junitReport(
      [execution("a", [run("failed")], "failed"), execution("b", [run("cancelled")], "cancelled")],
      new Map([["tp_a", "smoke"]]),
      new Map([
        ["a", server],
        [
          "b",
          '<?xml version="1.0"?>\n<testsuites name="x" tests="0" failures="0" errors="0" skipped="0">\n</testsuites>\n',
        ],
      ]),
    );
    expect(report).toContain('<testsuites name="testbay" tests="3" failures="1" errors="1">');
    expect(report).toContain('<testsuite name="smoke: agent host (attempt 1)" tests="2" failures="1"');
    expect(report).toContain('<failure message="minSdk is 24, expected at most 21"/>');
    // An execution no agent reported tests for keeps its per-device-run testcase.
    expect(report).toContain('<error type="cancelled" message="cancelled">');
  });

  it("leaves out a reported suite without a testcase (a shard that ran no test)", () => {
    const server = serverReport(
      'name="espresso" tests="1" failures="0" errors="0" skipped="0"',
      '  <testsuite name="device 1, shard 1 of 2: android (attempt 1)" tests="1" failures="0" errors="0" skipped="0">',
      '    <testcase classname="com.example.LoginTest" name="signsIn" time="1.500"/>',
      "  </testsuite>",
      '  <testsuite name="device 1, shard 2 of 2: android (attempt 1)" tests="0" failures="0" errors="0" skipped="0">',
      "  </testsuite>",
      '  <testsuite name="device 2: android (attempt 1)" tests="0" failures="0" errors="0" skipped="0"/>',
    );
    const report = junitReport(
      [execution("a", [run("passed"), run("passed"), run("passed")], "passed")],
      new Map([["tp_a", "espresso"]]),
      new Map([["a", server]]),
    );
    expect(report).toContain('<testsuites name="testbay" tests="1" failures="0" errors="0">');
    expect(report.match(/<testsuite /g)).toEqual(["<testsuite "]);
    expect(report).toContain(
      '<testsuite name="espresso: device 1, shard 1 of 2: android (attempt 1)" tests="1"',
    );
    expect(report).not.toContain('tests="0"');
    expect(report).toContain('name="signsIn" time="1.500"/>\n  </testsuite>\n</testsuites>');
  });

  it("keeps a reported multi-line failure message in lines: its line breaks stay character references", () => {
    const server = serverReport(
      'name="espresso" tests="1" failures="1" errors="0" skipped="0"',
      '  <testsuite name="device 1: android (attempt 1)" tests="1" failures="1" errors="0" skipped="0">',
      '    <testcase classname="com.example.CartTest" name="total" time="0.200">',
      '      <failure message="expected:&lt;1&gt;&#10;but was:&lt;2&gt;&#10;&#9;in the second row" type="java.lang.AssertionError">java.lang.AssertionError: expected:&lt;1&gt;',
      "\tat com.example.CartTest.total(CartTest.java:12)",
      "</failure>",
      "    </testcase>",
      "  </testsuite>",
    );
    const report = junitReport(
      [execution("a", [run("failed")], "failed")],
      new Map([["tp_a", "espresso"]]),
      new Map([["a", server]]),
    );
    expect(report).toContain(
      '<failure message="expected:&lt;1&gt;&#10;but was:&lt;2&gt;&#10;&#9;in the second row" type="java.lang.AssertionError">java.lang.AssertionError: expected:&lt;1&gt;\n\tat com.example.CartTest.total(CartTest.java:12)\n</failure>',
    );
    const failure = new XMLParser({
      ignoreAttributes: false,
      attributeNamePrefix: "",
      htmlEntities: true,
    }).parse(report).testsuites.testsuite.testcase.failure;
    expect(failure.message).toBe("expected:<1>\nbut was:<2>\n\tin the second row");
  });

  it("writes an execution's device runs when its report is not well-formed XML (a cut-off answer)", () => {
    const report = junitReport(
      [execution("a", [run("failed", "Pixel 8")], "failed")],
      new Map(),
      new Map([
        [
          "a",
          '<?xml version="1.0"?>\n<testsuites name="x" tests="1">\n  <testsuite name="s">\n    <testcase ',
        ],
      ]),
    );
    expect(report).toContain('<testsuites name="testbay" tests="1" failures="1" errors="0">');
    expect(report).toMatch(/name="device 1: Pixel 8 android, attempt 1"[^>]*>\s*<failure type="failed"/);
  });

  it("names a WebDriver session's suite for what it is and leaves out the plan, package and version it lacks", () => {
    const session: Execution = {
      ...execution("s", [run("errored", "Pixel 8")], "errored"),
      kind: "session",
      name: "Appium session",
      test_plan_id: null,
      package_name: null,
      version: null,
    };
    const report = junitReport([session], new Map([["tp_s", "not this"]]));
    expect(report).toContain(
      '<testsuite name="Appium session" id="s" tests="1" failures="0" errors="1" skipped="0"',
    );
    expect(report).toContain(
      '<testcase classname="Appium session" name="device 1: Pixel 8 android, attempt 1"',
    );
    expect(report).toContain("Appium session s: device run errored.");
    expect(report).toContain('<property name="execution_id" value="s"/>');
    expect(report).not.toMatch(/package=|name="test_plan_id"|name="version"|null/);
  });

  it("escapes markup, keeps tabs and line breaks in attributes as references and drops characters XML 1.0 forbids", () => {
    const report = junitReport(
      [execution("a", [run("passed")], "passed")],
      new Map([["tp_a", `a<b>"c"&'d'\u0001\u001b\tz\ny`]]),
    );
    expect(report).toContain(
      '<testsuite name="a&lt;b&gt;&quot;c&quot;&amp;&apos;d&apos;&#9;z&#10;y (tp_a)" id="a"',
    );
  });
});
