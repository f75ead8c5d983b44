import type { DeviceRun, Execution } from "../sdk/models.ts";
import {
  attributeOf,
  childrenOf,
  element,
  readXml,
  tagOf,
  withAttribute,
  withoutIndentation,
  writeXml,
  type XmlNode,
} from "./junit-xml.ts";
import { planLabel, sessionLabel } from "./plan-label.ts";

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

/** A count attribute of the server's report; 0 where it is missing or not a count. */
function count(node: XmlNode, name: string): number {
  const value = Number(attributeOf(node, name));
  return Number.isInteger(value) && value > 0 ? value : 0;
}

const holdsTestCase = (node: XmlNode): boolean =>
  tagOf(node) === "testcase" || childrenOf(node).some(holdsTestCase);

/**
 * The <testsuite> elements of an execution's report from the server (GET /executions/{id}/junit: a suite
 * per device run), renamed after the plan, with the report's counts; undefined when no agent reported a test
 * (or the answer is not a report). A suite without a <testcase> (a shard left without tests) is left out, as
 * servers since then leave it out themselves.
 */
function agentSuites(report: string, plan: string) {
  const root = readXml(report)?.find((node) => tagOf(node) === "testsuites");
  if (!root) return undefined;
  const kept = childrenOf(withoutIndentation(root)).filter(
    (node) => tagOf(node) !== "#text" && (tagOf(node) !== "testsuite" || holdsTestCase(node)),
  );
  if (!kept.some(holdsTestCase)) return undefined;
  const suites = kept.map((node) => {
    const name = attributeOf(node, "name");
    return tagOf(node) === "testsuite" && name !== undefined
      ? withAttribute(node, "name", `${plan}: ${name}`)
      : node;
  });
  return {
    suites,
    tests: count(root, "tests"),
    failures: count(root, "failures"),
    errors: count(root, "errors"),
  };
}

/**
 * The suite of an execution no agent reported a test for: a <testcase> per device run, with <failure> for
 * failed runs and <error> for errored, cancelled or unfinished ones.
 */
function deviceRunSuite(execution: Execution, planNames: Map<string, string>) {
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
  // A session (API.md §12) has no plan, and no package when it names no app: its cases say what it is.
  const label =
    execution.test_plan_id === null
      ? (execution.name ?? sessionLabel)
      : (planNames.get(execution.test_plan_id) ?? execution.test_plan_id);
  const classname = execution.package_name === null ? label : `${execution.package_name}.${label}`;
  let failures = 0;
  let errors = 0;
  const cases = runs.map((run, index) => {
    const { kind, message } = outcomeOf(run.status);
    const attributes = {
      classname,
      name: deviceName(run, index),
      time: seconds(run.started_at, run.finished_at),
    };
    if (kind === "passed") return element("testcase", attributes);
    if (kind === "failure") failures += 1;
    else errors += 1;
    const why =
      execution.test_plan_id === null
        ? `${sessionLabel} ${execution.id}: device run ${message}.`
        : `Execution ${execution.id} of plan ${execution.test_plan_id}: device run ${message}.`;
    return element("testcase", attributes, [
      element(kind, { type: run.status, message }, [{ "#text": why }]),
    ]);
  });
  const property = (name: string, value: string) => element("property", { name, value });
  const suite = element(
    "testsuite",
    {
      name: planLabel(execution, planNames),
      id: execution.id,
      ...(execution.package_name === null ? {} : { package: execution.package_name }),
      tests: runs.length,
      failures,
      errors,
      skipped: 0,
      timestamp: execution.created_at,
      time: seconds(execution.started_at, execution.finished_at),
    },
    [
      element("properties", {}, [
        property("execution_id", execution.id),
        ...(execution.test_plan_id === null ? [] : [property("test_plan_id", execution.test_plan_id)]),
        ...(execution.version === null ? [] : [property("version", execution.version)]),
        property("status", execution.status),
      ]),
      ...cases,
    ],
  );
  return { suites: [suite], tests: runs.length, failures, errors };
}

/**
 * One merged JUnit XML report for the executions of a run: a <testsuites> with the run's counts. An
 * execution whose agents reported test cases contributes the server's suites for it (a suite per device run,
 * flaky tests marked); one without (it was cancelled before it ran, errored, or is unfinished) a suite of its
 * device runs.
 */
export function junitReport(
  executions: Execution[],
  planNames: Map<string, string> = new Map(),
  agentReports: Map<string, string> = new Map(),
): string {
  const totals = { tests: 0, failures: 0, errors: 0 };
  const suites: XmlNode[] = [];
  for (const execution of executions) {
    const plan = execution.test_plan_id === null ? undefined : planNames.get(execution.test_plan_id);
    const part =
      agentSuites(
        agentReports.get(execution.id) ?? "",
        plan ?? execution.test_plan_id ?? execution.name ?? sessionLabel,
      ) ?? deviceRunSuite(execution, planNames);
    totals.tests += part.tests;
    totals.failures += part.failures;
    totals.errors += part.errors;
    suites.push(...part.suites);
  }
  return writeXml(element("testsuites", { name: "testbay", ...totals }, suites));
}
