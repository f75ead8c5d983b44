import type { DeviceRunRecord, ExecutionRecord } from "./executions.repo.ts";
import type { StoredTestCase } from "./results.repo.ts";

const escapes: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
};

/** XML 1.0 has no place for control characters other than tab and line breaks; test output has them. */
const allowedInXml = (c: string) => c >= " " || c === "\t" || c === "\n" || c === "\r";

function xml(text: string): string {
  return [...text]
    .filter(allowedInXml)
    .join("")
    .replace(/[&<>"']/g, (c) => escapes[c] ?? c);
}

function seconds(ms: number | null): string {
  return ((ms ?? 0) / 1000).toFixed(3);
}

function suiteName(run: DeviceRunRecord): string {
  const device = run.device;
  if (!device) return `agent host (attempt ${run.attempt})`;
  const parts = [device.platform, device.model, device.os_version].filter((p) => typeof p === "string");
  return `device ${run.position + 1}: ${parts.join(" ")} (attempt ${run.attempt})`;
}

const key = (c: StoredTestCase) => `${c.classname}\u0000${c.name}`;

/**
 * One JUnit XML document for an execution: a `<testsuite>` per device run holding its latest attempt's
 * test cases. Failures of earlier attempts are kept on the same test case, in the Maven Surefire way that
 * CI systems read: `<flakyFailure>` when the test passed in the end, `<rerunFailure>` when it did not.
 */
export function junitReport(execution: ExecutionRecord, cases: readonly StoredTestCase[]): string {
  const suites: string[] = [];
  const totals = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  for (const run of execution.deviceRuns) {
    const ofRun = cases.filter((c) => c.deviceRunId === run.id);
    const latest = ofRun.filter((c) => c.attempt === run.attempt);
    const earlierFailures = new Map<string, StoredTestCase[]>();
    for (const c of ofRun) {
      if (c.attempt === run.attempt || (c.status !== "failed" && c.status !== "errored")) continue;
      earlierFailures.set(key(c), [...(earlierFailures.get(key(c)) ?? []), c]);
    }
    const counts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
    const body = latest.map((c) => {
      counts.tests++;
      if (c.status === "failed") counts.failures++;
      if (c.status === "errored") counts.errors++;
      if (c.status === "skipped") counts.skipped++;
      return testCaseXml(c, earlierFailures.get(key(c)) ?? []);
    });
    for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += counts[k];
    suites.push(
      `  <testsuite name="${xml(suiteName(run))}" tests="${counts.tests}" failures="${counts.failures}" errors="${counts.errors}" skipped="${counts.skipped}"${run.startedAt ? ` timestamp="${run.startedAt}"` : ""}>\n${body.join("")}  </testsuite>\n`,
    );
  }
  const name = typeof execution.plan.name === "string" ? execution.plan.name : execution.testPlanId;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${xml(name)}" tests="${totals.tests}" failures="${totals.failures}" errors="${totals.errors}" skipped="${totals.skipped}">\n${suites.join("")}</testsuites>\n`;
}

function testCaseXml(c: StoredTestCase, earlier: readonly StoredTestCase[]): string {
  const parts: string[] = [];
  if (c.status === "failed" || c.status === "errored") {
    const tag = c.status === "failed" ? "failure" : "error";
    parts.push(`      <${tag} message="${xml(c.message ?? "")}">${xml(c.details ?? "")}</${tag}>\n`);
  }
  if (c.status === "skipped") parts.push("      <skipped/>\n");
  const rerunTag = c.status === "passed" ? "flakyFailure" : "rerunFailure";
  for (const failure of earlier) {
    parts.push(
      `      <${rerunTag} message="${xml(failure.message ?? "")}">${xml(failure.details ?? "")}</${rerunTag}>\n`,
    );
  }
  const open = `    <testcase classname="${xml(c.classname)}" name="${xml(c.name)}" time="${seconds(c.durationMs)}"`;
  return parts.length === 0 ? `${open}/>\n` : `${open}>\n${parts.join("")}    </testcase>\n`;
}
