import { testId } from "../tests/test-id.ts";
import type { DeviceRunRecord, ExecutionRecord } from "./executions.repo.ts";
import type { StoredTestCase } from "./results.repo.ts";
import { inTryOrder } from "./test-case-view.ts";
import { testsOwnerOf } from "./tests-owner.ts";

/** Why a test is quarantined: what its JUnit entry says instead of a failure. */
export interface JunitQuarantine {
  reason: string;
  quarantinedBy: string;
}

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

/**
 * An attribute value: XML parsers turn a literal line break or tab in an attribute into a space (attribute-value
 * normalization), so a multi-line failure message would reach other JUnit tools as one line; as character
 * references they survive.
 */
function xmlAttribute(text: string): string {
  return xml(text).replace(/[\n\r\t]/g, (c) => `&#${c.charCodeAt(0)};`);
}

function seconds(ms: number | null): string {
  return ((ms ?? 0) / 1000).toFixed(3);
}

/** Unique per device run: the shards of one device entry are told apart by their shard. */
function suiteName(run: DeviceRunRecord): string {
  const device = run.device;
  if (!device) return `agent host (attempt ${run.attempt})`;
  const parts = [device.platform, device.model, device.os_version].filter((p) => typeof p === "string");
  const shardCount = run.shardCount ?? 1;
  const shard = shardCount > 1 ? `, shard ${(run.shard ?? 0) + 1} of ${shardCount}` : "";
  return `device ${run.position + 1}${shard}: ${parts.join(" ")} (attempt ${run.attempt})`;
}

const key = (c: StoredTestCase) => `${c.classname}\u0000${c.name}`;
const failing = (c: StoredTestCase) => c.status === "failed" || c.status === "errored";

/**
 * One JUnit XML document for an execution: a `<testsuite>` per device run that reported a test (every device run
 * when none did), with one `<testcase>` per test of its latest attempt (a test rerun alone is still one test). Its other tries, on earlier attempts of the run
 * and reruns within the latest (retry_failed_tests), are kept on it the way Maven Surefire writes reruns,
 * which CI systems read: a test that passed in the end gets a `<flakyFailure>` (`<flakyError>`) per failed
 * (errored) try; one that never passed gets its first failed try as `<failure>` (`<error>`) and a
 * `<rerunFailure>` (`<rerunError>`) per later one; each with its message, exception type and `<stackTrace>`.
 *
 * A quarantined test that failed did not fail the execution, and must not fail the CI job that publishes this
 * report either (JUnit publishers fail a build on any `<failure>`): it is `<skipped>` with a message naming the
 * quarantine and the failure, and the failure's stack trace in `<system-err>`, so nothing is hidden.
 */
export function junitReport(
  execution: ExecutionRecord,
  cases: readonly StoredTestCase[],
  quarantined: ReadonlyMap<string, JunitQuarantine> = new Map(),
): string {
  const suites: Array<{ xml: string; tests: number }> = [];
  const totals = { tests: 0, failures: 0, errors: 0, skipped: 0 };
  for (const run of execution.deviceRuns) {
    const byTest = new Map<string, StoredTestCase[]>();
    for (const c of cases) {
      if (c.deviceRunId === run.id) byTest.set(key(c), [...(byTest.get(key(c)) ?? []), c]);
    }
    const counts = { tests: 0, failures: 0, errors: 0, skipped: 0 };
    const body: string[] = [];
    for (const reported of byTest.values()) {
      const tries = inTryOrder(reported);
      const final = tries.at(-1);
      // A test of an earlier attempt only (the run was re-queued and this test did not come back) is history.
      if (!final || final.attempt !== run.attempt) continue;
      const quarantine = quarantined.get(testId(testsOwnerOf(execution), final.classname, final.name));
      const { xml: testXml, counted } =
        quarantine && failing(final)
          ? quarantinedFailureXml(final, quarantine)
          : testCaseXml(final, tries.slice(0, -1));
      counts.tests++;
      if (counted) counts[counted]++;
      body.push(testXml);
    }
    for (const k of Object.keys(totals) as Array<keyof typeof totals>) totals[k] += counts[k];
    suites.push({
      xml: `  <testsuite name="${xmlAttribute(suiteName(run))}" tests="${counts.tests}" failures="${counts.failures}" errors="${counts.errors}" skipped="${counts.skipped}"${run.startedAt ? ` timestamp="${run.startedAt}"` : ""}>\n${body.join("")}  </testsuite>\n`,
      tests: counts.tests,
    });
  }
  // A device run that reported no test (a shard left without tests, a run that errored before its first) is
  // left out when others did: CI readers list an empty suite as a suite of the build. When no run reported one,
  // every run keeps its empty suite, so the report still names the device runs and is not an empty document.
  const kept = totals.tests > 0 ? suites.filter((suite) => suite.tests > 0) : suites;
  const name =
    typeof execution.plan.name === "string" ? execution.plan.name : (execution.testPlanId ?? execution.id);
  return `<?xml version="1.0" encoding="UTF-8"?>\n<testsuites name="${xmlAttribute(name)}" tests="${totals.tests}" failures="${totals.failures}" errors="${totals.errors}" skipped="${totals.skipped}">\n${kept.map((suite) => suite.xml).join("")}</testsuites>\n`;
}

/** The exception class a Java stack trace starts with ("java.lang.AssertionError: …"), when it does. */
export function exceptionType(details: string | null): string | null {
  const first = details?.split("\n", 1)[0]?.trim() ?? "";
  const match = /^([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)+)(?::|$)/.exec(first);
  return match?.[1] ?? null;
}

function attributes(c: StoredTestCase): string {
  const type = exceptionType(c.details);
  return `message="${xmlAttribute(c.message ?? "")}"${type ? ` type="${xmlAttribute(type)}"` : ""}`;
}

/** A try other than the one the test case stands for: Surefire's flaky* / rerun* element with a stackTrace. */
function otherTry(tag: string, c: StoredTestCase): string {
  return `      <${tag} ${attributes(c)}>\n        <stackTrace>${xml(c.details ?? "")}</stackTrace>\n      </${tag}>\n`;
}

function quarantinedFailureXml(
  final: StoredTestCase,
  quarantine: JunitQuarantine,
): { xml: string; counted: "skipped" } {
  const message = `Quarantined by ${quarantine.quarantinedBy} (${quarantine.reason}); it ${final.status}: ${final.message ?? "no message"}`;
  return {
    xml:
      `    <testcase classname="${xmlAttribute(final.classname)}" name="${xmlAttribute(final.name)}" time="${seconds(final.durationMs)}">\n` +
      `      <skipped message="${xmlAttribute(message)}"/>\n` +
      `      <system-err>${xml(final.details ?? "")}</system-err>\n` +
      "    </testcase>\n",
    counted: "skipped",
  };
}

function testCaseXml(
  final: StoredTestCase,
  earlier: readonly StoredTestCase[],
): { xml: string; counted: "failures" | "errors" | "skipped" | null } {
  const parts: string[] = [];
  let counted: "failures" | "errors" | "skipped" | null = null;
  const failedTries = [...earlier, final].filter(failing);
  const first = failedTries[0];
  if (failing(final) && first) {
    // Never passed: the first failed try is the failure, every later one a rerun of it.
    const tag = first.status === "failed" ? "failure" : "error";
    counted = first.status === "failed" ? "failures" : "errors";
    parts.push(`      <${tag} ${attributes(first)}>${xml(first.details ?? "")}</${tag}>\n`);
    for (const rerun of failedTries.slice(1)) {
      parts.push(otherTry(rerun.status === "failed" ? "rerunFailure" : "rerunError", rerun));
    }
  } else {
    if (final.status === "skipped") {
      counted = "skipped";
      parts.push("      <skipped/>\n");
    }
    for (const flaky of failedTries) {
      parts.push(otherTry(flaky.status === "failed" ? "flakyFailure" : "flakyError", flaky));
    }
  }
  const open = `    <testcase classname="${xmlAttribute(final.classname)}" name="${xmlAttribute(final.name)}" time="${seconds(final.durationMs)}"`;
  return {
    xml: parts.length === 0 ? `${open}/>\n` : `${open}>\n${parts.join("")}    </testcase>\n`,
    counted,
  };
}
