// What `testbay run --wait` shows a person: the live view (redrawn on a terminal, lines in CI logs), the failed
// tests with their messages at the end, waiting reasons, dashboard links, the GitHub job summary, and Ctrl-C.
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { Captured, ScriptedServer } from "../../test/scripted-server.ts";
import { FakeClock } from "../sdk/clock.ts";
import type { Execution, TestCase } from "../sdk/models.ts";
import { type CliIo, main } from "./main.ts";
import {
  executionLine,
  failedTestLine,
  finalReportMarkdown,
  finalReportText,
  stackHead,
  waitView,
} from "./wait-view.ts";

let server: ScriptedServer;
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-wait-"));
});
afterAll(() => rm(dir, { recursive: true, force: true }));
beforeEach(async () => {
  server = new ScriptedServer();
  await server.start();
});
afterEach(() => server.close());

function execution(
  id: string,
  status: Execution["status"],
  extra: Partial<Execution> = {},
  runs: Execution["devices"][number]["status"][] = [status],
): Execution {
  return {
    id,
    kind: "run",
    name: "Smoke",
    test_plan_id: `tp_${id}`,
    package_name: "com.example.basic",
    version: "1.2.3",
    status,
    cancel_requested: false,
    created_at: "2026-01-01T00:00:00.000Z",
    started_at: null,
    finished_at: null,
    summary: { tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 },
    ci: null,
    priority: "normal",
    triggered_by: { type: "client", id: "cl_ci", name: null },
    client_result: null,
    waiting_reason: null,
    devices: runs.map((run) => ({
      device: null,
      status: run,
      attempt: 1,
      started_at: null,
      finished_at: null,
      reason: null,
      summary: null,
      agent_id: null,
      claimed_device: null,
      shard: 0,
      steps: [],
    })),
    steps: [],
    ...extra,
  };
}

function testCase(name: string, message: string, stack: string): TestCase {
  return {
    id: `tc_${name}`,
    classname: "com.example.LoginTest",
    name,
    status: "failed",
    flaky: false,
    quarantined: false,
    duration_ms: 120,
    message,
    stack_trace: stack,
    device: { position: 0, platform: "android", serial: "emulator-5554", model: "Pixel 8", os_version: "14" },
    shard: 0,
    attempt: 1,
    attempts: [],
    artifacts: [],
    video_offset_ms: null,
  };
}

const list = (...items: Execution[]) => ({ status: 200, body: { items, next_cursor: null } });
const stack = [
  "java.lang.AssertionError: expected:<Welcome> but was:<Wrong password>",
  "\tat org.junit.Assert.failNotEquals(Assert.java:835)",
  "\tat org.junit.Assert.assertEquals(Assert.java:120)",
  "\tat com.example.LoginTest.wrongPassword(LoginTest.kt:42)",
  "\tat java.lang.reflect.Method.invoke(Native Method)",
  "\tat org.junit.runners.model.FrameworkMethod$1.runReflectiveCall(FrameworkMethod.java:59)",
].join("\n");

const runArgs = ["run", "--app", "com.example.basic", "--version", "1.2.3", "--plan", "tp_a,tp_b", "--wait"];

async function cli(
  argv: string[],
  env: Record<string, string> = {},
  options: Pick<CliIo, "onInterrupt" | "onResponse"> & { tty?: boolean } = {},
) {
  const stdout = new Captured();
  const stderr = new Captured();
  stderr.isTTY = options.tty === true;
  const code = await main(argv, {
    env: {
      TESTBAY_URL: server.baseUrl,
      TESTBAY_CLIENT_ID: "cl_ci",
      TESTBAY_CLIENT_SECRET: "secret",
      CI: "true",
      ...env,
    },
    stdout,
    stderr,
    cwd: dir,
    clock: new FakeClock(),
    ...(options.onInterrupt ? { onInterrupt: options.onInterrupt } : {}),
    ...(options.onResponse ? { onResponse: options.onResponse } : {}),
  });
  return { code, stdout: stdout.text, stderr: stderr.text };
}

describe("run --wait, at the end", () => {
  beforeEach(() => {
    server
      .script("POST /testplan/run/batch", {
        status: 200,
        body: {
          executions: [execution("ex_a", "queued"), execution("ex_b", "queued")],
          failed_executions: [],
        },
      })
      .script("GET /testplans", {
        status: 200,
        body: { items: [{ id: "tp_ex_a", name: "login" }], next_cursor: null },
      });
  });

  it("shows each failed test with its message and first stack lines, waits with their reason, links, and the job summary", async () => {
    const failed = execution("ex_a", "failed", {
      summary: { tests: 3, passed: 2, failed: 1, skipped: 0, flaky: 0 },
    });
    const stuck = execution("ex_b", "queued", {
      waiting_reason: {
        code: "no_capable_agent",
        detail: "no agent offers step type shell: start one with --allow-shell",
      },
    });
    server.script("GET /executions", list(failed, stuck)).script("GET /executions/ex_a/tests", {
      status: 200,
      body: {
        items: [testCase("wrongPassword", "expected:<Welcome> but was:<Wrong password>", stack)],
        next_cursor: null,
      },
    });
    const summary = path.join(dir, "step-summary.md");

    const run = await cli([...runArgs, "--timeout", "10s"], { GITHUB_STEP_SUMMARY: summary });

    expect(run.code).toBe(5);
    const failedQueries = server.requests("GET /executions/ex_a/tests").map((r) => r.query.get("status"));
    expect(failedQueries).toEqual(["failed", "errored"]);
    expect(server.count("GET /executions/ex_b/tests")).toBe(0);
    expect(run.stdout).toContain("Failed in ex_a login (tp_ex_a):");
    expect(run.stdout).toContain("✗ com.example.LoginTest.wrongPassword (failed, Pixel 8 emulator-5554)");
    expect(run.stdout).toContain("expected:<Welcome> but was:<Wrong password>");
    expect(run.stdout).toContain("at com.example.LoginTest.wrongPassword(LoginTest.kt:42)");
    // Only the first lines of the stack: the rest is counted, not printed.
    expect(run.stdout).not.toContain("FrameworkMethod");
    expect(run.stdout).toContain("… 2 more lines");
    expect(run.stdout).toContain(
      "Still queued: ex_b tp_ex_b: no agent offers step type shell: start one with --allow-shell",
    );
    const origin = server.baseUrl.replace(/\/v1$/, "");
    expect(run.stdout).toContain(`ex_a  failed  ${origin}/runs/ex_a`);

    const markdown = await readFile(summary, "utf8");
    expect(markdown).toContain("### Testbay: com.example.basic 1.2.3");
    expect(markdown).toContain(
      `| [ex\\_a](${origin}/runs/ex_a) | login (tp\\_ex\\_a) | failed | 3 | 2 | 1 |`,
    );
    expect(markdown).toContain("**ex\\_b still queued:** no agent offers step type shell");
    expect(markdown).toContain(
      "<summary>❌ com.example.LoginTest.wrongPassword (Pixel 8 emulator-5554)</summary>",
    );
    expect(markdown).toMatch(/```\nexpected:<Welcome> but was:<Wrong password>\njava\.lang\.AssertionError/);
  });

  it("follows a WebDriver session without an app by reading it alone, and names it in the summary (API.md §12)", async () => {
    const session = (status: Execution["status"]) =>
      execution("ex_s", status, {
        kind: "session",
        name: "Appium session",
        test_plan_id: null,
        package_name: null,
        version: null,
      });
    server.script(
      "GET /executions/ex_s",
      { status: 200, body: session("running") },
      { status: 200, body: session("running") },
      { status: 200, body: session("passed") },
    );
    const summary = path.join(dir, "session-summary.md");

    const status = await cli(["status", "ex_s", "--wait", "--timeout", "10s"], {
      GITHUB_STEP_SUMMARY: summary,
    });

    expect(status.code).toBe(0);
    expect(server.count("GET /executions/ex_s")).toBe(3);
    // No package or version to list by, and no plan to name.
    expect(server.count("GET /executions")).toBe(0);
    expect(server.count("GET /testplans")).toBe(0);
    const markdown = await readFile(summary, "utf8");
    expect(markdown).toContain("### Testbay: Appium session\n");
    expect(markdown).toContain(" | Appium session | passed | 0 | 0 | 0 |");
    expect(markdown).not.toContain("null");
  });

  it("on Ctrl-C says the runs go on and how to follow them, and exits 130", async () => {
    server.script("GET /executions", list(execution("ex_a", "running"), execution("ex_b", "queued")));
    let interrupt: (() => void) | undefined;
    let subscribed = 0;
    const run = await cli(
      runArgs,
      {},
      {
        onInterrupt: (handler) => {
          subscribed += 1;
          interrupt = handler;
          return () => {
            subscribed -= 1;
          };
        },
        // The person presses Ctrl-C once the first poll was answered.
        onResponse: (event) => {
          if (event.path === "/executions") interrupt?.();
        },
      },
    );
    expect(interrupt).toBeDefined();
    expect(run.code).toBe(130);
    expect(server.count("GET /executions")).toBe(1);
    expect(subscribed).toBe(0);
    expect(run.stderr).toContain(
      "Interrupted: stopped waiting. The executions go on on the server; follow them with testbay status ex_a ex_b",
    );
    expect(run.stdout).toBe("");
  });
});

describe("the live view", () => {
  const names = new Map([["tp_ex_a", "login"]]);

  it("says per execution: status, device runs, tests so far, and why a queued one waits", () => {
    const running = execution(
      "ex_a",
      "running",
      { summary: { tests: 14, passed: 12, failed: 2, skipped: 0, flaky: 0 } },
      ["passed", "running", "queued"],
    );
    expect(executionLine(running, names)).toBe(
      "ex_a  login (tp_ex_a)  running · device runs 1/3 ended, 1 running · tests 12 passed, 2 failed",
    );
    // Tests that passed only when rerun alone (retry_failed_tests) are said to be flaky.
    const flaky = execution("ex_c", "passed", {
      summary: { tests: 14, passed: 14, failed: 0, skipped: 0, flaky: 2 },
    });
    expect(executionLine(flaky)).toMatch(/ · tests 14 passed \(2 flaky\), 0 failed$/);
    const waiting = execution("ex_b", "queued", {
      waiting_reason: { code: "no_capable_agent", detail: "no android device matches model Pixel 8" },
    });
    expect(executionLine(waiting)).toMatch(/queued · .* · waiting: no android device matches model Pixel 8$/);
  });

  it("names a WebDriver session, which has no plan, for what it is (API.md §12)", () => {
    const session = execution("ex_s", "running", {
      kind: "session",
      name: "Appium session",
      test_plan_id: null,
      package_name: null,
      version: null,
    });
    expect(executionLine(session, names)).toBe(
      "ex_s  Appium session  running · device runs 0/1 ended, 1 running · tests 0 passed, 0 failed",
    );
  });

  it("redraws one block in place on a terminal", () => {
    const out = new Captured();
    out.isTTY = true;
    const view = waitView(out, {}, names);
    view.update([execution("ex_a", "queued"), execution("ex_b", "queued")]);
    view.update([execution("ex_a", "running"), execution("ex_b", "queued")]);
    const [first, second] = out.text.split("\u001b[2F");
    expect(first).toBe(
      "\u001b[J  ex_a  login (tp_ex_a)  queued · device runs 0/1 ended · tests 0 passed, 0 failed\n  ex_b  tp_ex_b  queued · device runs 0/1 ended · tests 0 passed, 0 failed\n",
    );
    expect(
      second?.startsWith("\u001b[J  ex_a  login (tp_ex_a)  running · device runs 0/1 ended, 1 running"),
    ).toBe(true);
  });

  it("gives a waiting reason its own line on a terminal, counted in the redraw", () => {
    const out = new Captured();
    out.isTTY = true;
    const view = waitView(out, {});
    const waiting = execution("ex_b", "queued", {
      waiting_reason: { code: "no_capable_agent", detail: "no agent is online" },
    });
    view.update([execution("ex_a", "queued"), waiting]);
    view.update([execution("ex_a", "running"), waiting]);
    const [first, second] = out.text.split("\u001b[3F");
    expect(first?.split("\n")).toEqual([
      "\u001b[J  ex_a  tp_ex_a  queued · device runs 0/1 ended · tests 0 passed, 0 failed",
      "  ex_b  tp_ex_b  queued · device runs 0/1 ended · tests 0 passed, 0 failed",
      "      waiting: no agent is online",
      "",
    ]);
    expect(second?.split("\n")).toHaveLength(4);
  });

  it("writes plain lines in CI logs, one per change, never an escape code", () => {
    const out = new Captured();
    out.isTTY = true;
    const view = waitView(out, { CI: "true" });
    view.update([execution("ex_a", "queued"), execution("ex_b", "queued")]);
    view.update([execution("ex_a", "running"), execution("ex_b", "queued")]);
    expect(out.text.includes("\u001b")).toBe(false);
    expect(out.text.trimEnd().split("\n")).toEqual([
      "  ex_a  tp_ex_a  queued · device runs 0/1 ended · tests 0 passed, 0 failed",
      "  ex_b  tp_ex_b  queued · device runs 0/1 ended · tests 0 passed, 0 failed",
      "  ex_a  tp_ex_a  running · device runs 0/1 ended, 1 running · tests 0 passed, 0 failed",
    ]);
  });
});

describe("the report's pieces", () => {
  it("says how many tries a failed test had and its shard, and does not repeat the message from the stack", () => {
    const test = {
      ...testCase(
        "wrongPassword",
        "java.lang.AssertionError: no",
        "java.lang.AssertionError: no\n\tat X.y(X.kt:1)",
      ),
      shard: 2,
      attempts: [1, 2, 3].map((retry) => ({
        attempt: 1,
        retry,
        status: "failed" as const,
        duration_ms: 5,
        message: "no",
        artifacts: [],
      })),
    };
    expect(failedTestLine(test, true)).toBe(
      "  ✗ com.example.LoginTest.wrongPassword (failed on all 3 tries, Pixel 8 emulator-5554, shard 3)",
    );
    expect(failedTestLine({ ...test, attempts: [] }, false)).toBe(
      "  ✗ com.example.LoginTest.wrongPassword (failed, Pixel 8 emulator-5554)",
    );
    const plain = execution("ex_s", "failed", {}, ["failed", "failed", "failed"]);
    const sharded = { ...plain, devices: plain.devices.map((run, shard) => ({ ...run, shard })) };
    const text = finalReportText({
      executions: [sharded],
      names: new Map(),
      failedTests: new Map([["ex_s", { items: [test], more: false }]]),
      baseUrl: "http://testbay.example/v1",
    });
    expect(text.split("\n").filter((line) => line.includes("java.lang.AssertionError: no"))).toHaveLength(1);
    expect(text).toContain("at X.y(X.kt:1)");
    expect(text).toContain("shard 3)");
  });

  it("shows a long message's first lines and where to read it whole; the job summary keeps it whole", () => {
    const diff = [
      "expected:<Subtotal  12.00",
      "Discount  -1.00",
      "Tax        1.10",
      "Total     12.10> but was:<Subtotal  12.00",
      "Discount   0.00",
      "Tax        1.20",
      "Total     13.20>",
    ];
    const test = testCase(
      "printsTotals",
      diff.join("\n"),
      [
        `org.junit.ComparisonFailure: ${diff[0]}`,
        ...diff.slice(1),
        "\tat com.example.ReceiptTest.printsTotals(ReceiptTest.kt:31)",
      ].join("\n"),
    );
    const launch = testCase(
      "testLaunch",
      "Failed to launch app with identifier: com.example.shop and options: {\n    ActivateSuspended = 0;\n}\nThe request was denied by service delegate (SBMainWorkspace)",
      "",
    );
    const report = {
      executions: [execution("ex_s", "failed")],
      names: new Map(),
      failedTests: new Map([["ex_s", { items: [test, launch], more: false }]]),
      baseUrl: "http://testbay.example/v1",
    };
    const lines = finalReportText(report).split("\n");
    const at = lines.indexOf("  ✗ com.example.LoginTest.printsTotals (failed, Pixel 8 emulator-5554)");
    expect(lines.slice(at + 1, at + 10)).toEqual([
      "      expected:<Subtotal  12.00",
      "      Discount  -1.00",
      "      Tax        1.10",
      "      Total     12.10> but was:<Subtotal  12.00",
      "      Discount   0.00",
      "      … 2 more lines: testbay junit ex_s has the whole message",
      // The stack's first line names the exception; the message's lines after it are not said twice.
      "        org.junit.ComparisonFailure: expected:<Subtotal  12.00",
      "        at com.example.ReceiptTest.printsTotals(ReceiptTest.kt:31)",
      "  ✗ com.example.LoginTest.testLaunch (failed, Pixel 8 emulator-5554)",
    ]);
    // Four lines: all shown, the cause after the generic first ones, and no count.
    expect(lines.slice(at + 10, at + 14)).toEqual([
      "      Failed to launch app with identifier: com.example.shop and options: {",
      "          ActivateSuspended = 0;",
      "      }",
      "      The request was denied by service delegate (SBMainWorkspace)",
    ]);
    expect(lines.filter((l) => l.includes("more line"))).toHaveLength(1);
    const markdown = finalReportMarkdown(report, "Testbay");
    expect(markdown).toContain(`\`\`\`\n${diff.join("\n")}\norg.junit.ComparisonFailure`);
  });

  it("keeps the first stack lines and counts the rest", () => {
    expect(stackHead(null)).toEqual([]);
    expect(stackHead("a\n\nb\nc", 2)).toEqual(["a", "b", "… 1 more line"]);
  });

  it("fences a message with backticks in it so the job summary shows it verbatim", () => {
    const test = testCase("quotes", "expected ``` in output", "");
    const markdown = finalReportMarkdown(
      {
        executions: [execution("ex_a", "failed")],
        names: new Map(),
        failedTests: new Map([["ex_a", { items: [test], more: false }]]),
        baseUrl: "http://testbay.example/v1",
      },
      "Testbay",
    );
    expect(markdown).toContain("````\nexpected ``` in output\n````");
    expect(markdown).toContain("[ex\\_a](http://testbay.example/runs/ex_a)");
  });
});
