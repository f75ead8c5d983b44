import type { DeviceRun, Execution } from "../sdk/models.ts";

const escapes: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&apos;",
};

/** XML 1.0 allows tab, line feed and carriage return, and no other character below U+0020. */
const allowedInXml = (c: string) => c.charCodeAt(0) >= 0x20 || c === "\t" || c === "\n" || c === "\r";

/** Text safe inside an XML attribute or element: escaped, and without characters XML 1.0 forbids. */
export function xml(text: string): string {
  return [...text]
    .filter(allowedInXml)
    .join("")
    .replace(/[&<>"']/g, (c) => escapes[c] ?? c);
}

function seconds(start: string | null, end: string | null): string {
  if (!start || !end) return "0";
  return Math.max(0, (Date.parse(end) - Date.parse(start)) / 1000).toFixed(3);
}

function deviceName(run: Pick<DeviceRun, "device" | "attempt">, index: number): string {
  const device = run.device;
  if (!device) return `agent host, attempt ${run.attempt}`;
  const parts = [device.model, device.platform, device.os_version].filter((p) => typeof p === "string" && p);
  return `device ${index + 1}: ${parts.join(" ") || "any"}, attempt ${run.attempt}`;
}

type Outcome = "passed" | "failure" | "error";

/** failed → <failure>; errored, cancelled and unfinished (queued or running when the wait ended) → <error>. */
function outcomeOf(status: DeviceRun["status"]): { kind: Outcome; message: string } {
  switch (status) {
    case "passed":
      return { kind: "passed", message: "" };
    case "failed":
      return { kind: "failure", message: "failed" };
    case "errored":
      return { kind: "error", message: "errored" };
    case "cancelled":
      return { kind: "error", message: "cancelled" };
    default:
      return { kind: "error", message: `still ${status} when the wait ended` };
  }
}

const count = (tag: string, name: string) => Number(new RegExp(`\\b${name}="(\\d+)"`).exec(tag)?.[1] ?? 0);

/**
 * The <testsuite> elements of an execution's report from the server (GET /executions/{id}/junit: a suite
 * per device run), renamed after the plan, with their counts; undefined when no agent reported a test. A suite
 * without a <testcase> (a shard left without tests) is left out, as servers since then leave it out themselves.
 */
export function agentSuites(report: string, plan: string) {
  const root = /<testsuites\b[^>]*>/.exec(report);
  const end = report.lastIndexOf("</testsuites>");
  if (!root || end < 0 || !report.includes("<testcase")) return undefined;
  const body = report
    .slice(root.index + root[0].length, end)
    .replace(/[ \t]*<testsuite\b[^>]*?(?:\/>|>[\s\S]*?<\/testsuite>)\n?/g, (suite) =>
      suite.includes("<testcase") ? suite : "",
    )
    .replace(/<testsuite name="/g, `<testsuite name="${xml(plan)}: `)
    .trimEnd();
  return {
    xml: body.replace(/^\n/, ""),
    tests: count(root[0], "tests"),
    failures: count(root[0], "failures"),
    errors: count(root[0], "errors"),
  };
}

/**
 * One merged JUnit XML report for the executions of a run. An execution whose agents reported test cases
 * contributes the server's suites for it (a suite per device run, flaky tests marked); one without (it was
 * cancelled before it ran, errored, or is unfinished) gets a suite with a <testcase> per device run, with
 * <failure> for failed runs and <error> for errored, cancelled or unfinished ones.
 */
export function junitReport(
  executions: Execution[],
  planNames: Map<string, string> = new Map(),
  agentReports: Map<string, string> = new Map(),
): string {
  let tests = 0;
  let failures = 0;
  let errors = 0;
  const suites: string[] = [];
  for (const execution of executions) {
    const planLabel = planNames.get(execution.test_plan_id) ?? execution.test_plan_id;
    const reported = agentSuites(agentReports.get(execution.id) ?? "", planLabel);
    if (reported) {
      tests += reported.tests;
      failures += reported.failures;
      errors += reported.errors;
      suites.push(reported.xml);
      continue;
    }
    const cases: string[] = [];
    let suiteFailures = 0;
    let suiteErrors = 0;
    // A host run has no device entry: only the fields the report reads are filled in.
    const runs: Array<Pick<DeviceRun, "device" | "status" | "attempt" | "started_at" | "finished_at">> =
      execution.devices.length
        ? execution.devices
        : [
            {
              device: null,
              status: execution.status,
              attempt: 1,
              started_at: execution.started_at,
              finished_at: execution.finished_at,
            },
          ];
    const plan = planNames.get(execution.test_plan_id);
    const classname = `${execution.package_name}.${plan ?? execution.test_plan_id}`;
    runs.forEach((run, index) => {
      const { kind, message } = outcomeOf(run.status);
      const open = `    <testcase classname="${xml(classname)}" name="${xml(deviceName(run, index))}" time="${seconds(run.started_at, run.finished_at)}"`;
      if (kind === "passed") {
        cases.push(`${open}/>`);
        return;
      }
      if (kind === "failure") suiteFailures += 1;
      else suiteErrors += 1;
      const element = kind === "failure" ? "failure" : "error";
      cases.push(
        `${open}>\n      <${element} type="${xml(run.status)}" message="${xml(message)}">${xml(`Execution ${execution.id} of plan ${execution.test_plan_id}: device run ${message}.`)}</${element}>\n    </testcase>`,
      );
    });
    tests += runs.length;
    failures += suiteFailures;
    errors += suiteErrors;
    const name = plan ? `${plan} (${execution.test_plan_id})` : execution.test_plan_id;
    suites.push(
      [
        `  <testsuite name="${xml(name)}" id="${xml(execution.id)}" package="${xml(execution.package_name)}" tests="${runs.length}" failures="${suiteFailures}" errors="${suiteErrors}" skipped="0" timestamp="${xml(execution.created_at)}" time="${seconds(execution.started_at, execution.finished_at)}">`,
        "    <properties>",
        `      <property name="execution_id" value="${xml(execution.id)}"/>`,
        `      <property name="test_plan_id" value="${xml(execution.test_plan_id)}"/>`,
        `      <property name="version" value="${xml(execution.version)}"/>`,
        `      <property name="status" value="${xml(execution.status)}"/>`,
        "    </properties>",
        ...cases,
        "  </testsuite>",
      ].join("\n"),
    );
  }
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="testbay" tests="${tests}" failures="${failures}" errors="${errors}">`,
    ...suites,
    "</testsuites>",
    "",
  ].join("\n");
}
