// The report to share (API.md §16): at most 5 MB for a run of 5,000 tests, however long and hostile what the tests
// printed; every failed test is still named; what was cut is said.
import { describe, expect, it } from "vitest";
import { sampleDeviceRun, sampleExecution } from "../executions/sample-records.fixture.ts";
import type { TestCaseView } from "../executions/test-case-view.ts";
import { reportHtml } from "./report-html.ts";
import type { ReportModel, ScreenshotShown } from "./report-model.ts";
import { testCaseKey } from "./report-model.ts";

const run = sampleDeviceRun({ status: "failed", finishedAt: "2026-11-24T10:31:00.000Z" });

const execution = sampleExecution({
  status: "failed",
  plan: { name: "full regression" },
  summary: { tests: 5000, passed: 4000, failed: 1000, skipped: 0, flaky: 0 },
  triggeredBy: "cl_1",
  startedAt: "2026-11-24T10:00:01.000Z",
  finishedAt: "2026-11-24T10:31:00.000Z",
  deviceRuns: [run],
});

function test(index: number, failed: boolean, name: string, classname: string): TestCaseView {
  const message = failed ? `<b>expected</b> ${"&".repeat(3000)}` : null;
  return {
    id: `t_${index}`,
    classname,
    name,
    status: failed ? "failed" : "passed",
    flaky: false,
    quarantined: false,
    duration_ms: 1234,
    message,
    stack_trace: failed
      ? Array.from({ length: 200 }, (_, i) => `\tat com.example.Frame${i}.method(<File>.java:${i})`).join(
          "\n",
        )
      : null,
    device: { position: 0, platform: "android", serial: "emulator-5554", model: "Pixel 7", os_version: "14" },
    shard: 0,
    attempt: 1,
    attempts: [
      {
        attempt: 1,
        retry: 0,
        status: failed ? "failed" : "passed",
        duration_ms: 1234,
        message,
        artifacts: [],
      },
    ],
    artifacts: [],
    video_offset_ms: null,
  };
}

describe("reportHtml", () => {
  it("stays under 5 MB for 5,000 tests with 1,000 long failures, hostile names and 60 thumbnails", () => {
    const tests = Array.from({ length: 5000 }, (_, i) =>
      test(i, i % 5 === 0, `<${"<".repeat(300)}test${i}`, `com.example.${"é".repeat(200)}Test`),
    );
    const screenshots = new Map<string, ScreenshotShown>();
    const thumbnail = `data:image/png;base64,${"A".repeat(23_000)}`;
    for (const t of tests.filter((t) => t.status === "failed").slice(0, 60)) {
      screenshots.set(testCaseKey(t), {
        kind: "thumbnail",
        name: "shot.png",
        dataUri: thumbnail,
        width: 180,
        height: 400,
      });
    }
    const model: ReportModel = {
      execution,
      triggeredByName: null,
      tests,
      quarantines: new Map(),
      screenshots,
      groups: null,
      generatedAt: "2026-11-24T11:00:00.000Z",
    };
    const page = reportHtml(model);
    expect(Buffer.byteLength(page)).toBeLessThanOrEqual(5_000_000);
    // Every test is a row of the table, every failure is named in the failures part or said to be in the table.
    expect(page.match(/<tr data-status=/g)).toHaveLength(5000);
    expect(page).toContain("Failures (1000)");
    expect(page).toContain("failed tests are listed with the start of their message only");
    expect(page).toContain("long test names are cut in the table of all tests");
    expect(page.match(/<script/g)).toHaveLength(1);
    expect(page).not.toContain("<<");
  });

  it("escapes names, messages and stacks, and links a build URL only when it is http(s)", () => {
    const hostile = test(1, true, `"><script>alert(1)</script>`, "x' onmouseover='alert(1)");
    const page = reportHtml({
      execution: { ...execution, ci: { build_url: "javascript:alert(1)" } },
      triggeredByName: "<b>ci</b>",
      tests: [hostile],
      quarantines: new Map(),
      screenshots: new Map(),
      groups: new Map([
        [testCaseKey(hostile), { signature: "sig1", title: "AssertionError <at> LoginTest.signIn" }],
      ]),
      generatedAt: "2026-11-24T11:00:00.000Z",
    });
    expect(page).not.toContain("<script>alert");
    expect(page).not.toContain("onmouseover='");
    expect(page).toContain("&quot;&gt;&lt;script&gt;alert(1)&lt;/script&gt;");
    expect(page).not.toContain('href="javascript:');
    expect(page).toContain("javascript:alert(1)");
    // The client's name, escaped, beside its ID.
    expect(page).toContain("&lt;b&gt;ci&lt;/b&gt; (cl_1)");
    // The failure group is named on the failure and listed with its count.
    expect(page).toContain("Failure groups (1)");
    expect(page).toContain("group: AssertionError &lt;at&gt; LoginTest.signIn");
  });
});
