import {
  describeCause,
  type FailedExecution,
  notFoundHint,
  TestbayApiError,
  TestbayGaveUpError,
  TestbayNetworkError,
} from "../sdk/errors.ts";
import type { Execution, TestPlan } from "../sdk/models.ts";
import { formatDuration } from "./duration.ts";
import { UsageError } from "./exit-codes.ts";
import { planLabel } from "./plan-label.ts";

export interface Writer {
  write(text: string): unknown;
}

/** Bytes for people: 812 bytes, 8.3 KiB, 42.0 MiB. */
export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} bytes`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KiB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MiB`;
}

/** Rows as aligned columns, the first row the header. */
export function table(rows: string[][]): string {
  const widths: number[] = [];
  for (const row of rows) {
    row.forEach((cell, i) => {
      widths[i] = Math.max(widths[i] ?? 0, cell.length);
    });
  }
  return rows
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("  ")
        .trimEnd(),
    )
    .join("\n")
    .concat("\n");
}

function elapsed(execution: Execution): string {
  if (!execution.started_at) return "-";
  const end = execution.finished_at ? Date.parse(execution.finished_at) : undefined;
  return end === undefined ? "-" : formatDuration(end - Date.parse(execution.started_at));
}

/** The summary table of executions: one row each, with their plan's name when known (a session: plan-label.ts). */
export function executionTable(executions: Execution[], planNames: Map<string, string> = new Map()): string {
  const rows = [["EXECUTION", "PLAN", "STATUS", "TESTS", "PASSED", "FAILED", "SKIPPED", "DEVICES", "TIME"]];
  for (const e of executions) {
    rows.push([
      e.id,
      planLabel(e, planNames),
      e.status,
      String(e.summary.tests),
      String(e.summary.passed),
      String(e.summary.failed),
      String(e.summary.skipped),
      String(e.devices.length),
      elapsed(e),
    ]);
  }
  return table(rows);
}

export function planTable(plans: TestPlan[]): string {
  const rows = [["ID", "NAME", "PACKAGE", "STATE", "DEVICES", "STEPS"]];
  for (const p of plans) {
    rows.push([
      p.id,
      p.name,
      p.package_name,
      p.state,
      String(p.devices.length || "host"),
      String(p.steps.length),
    ]);
  }
  return table(rows);
}

/** Counts by status, e.g. "2 queued, 1 passed". */
export function statusCounts(executions: Execution[]): string {
  const counts = new Map<string, number>();
  for (const e of executions) counts.set(e.status, (counts.get(e.status) ?? 0) + 1);
  return [...counts].map(([status, n]) => `${n} ${status}`).join(", ");
}

/** What to type with this CLI for a plan that did not start, when the server's fix speaks HTTP (rule 12). */
function failedExecutionCommand(failed: FailedExecution, context: FixContext): string | undefined {
  if (failed.fix?.includes("testbay ")) return undefined;
  const app = context.app ?? "PACKAGE";
  const version = context.version ?? "VERSION";
  if (failed.code === "test_plan_not_found" && failed.reason === "archived")
    return `testbay plans restore ${failed.test_plan_id}`;
  if (failed.code === "app_version_not_found")
    return `testbay upload --app ${app} --version ${version} --file ${context.file ?? "PATH"}`;
  if (failed.code === "test_package_not_found")
    return `testbay upload --app ${app} --version ${version} --file ${context.file ?? "PATH"} --test-file TEST_APK (the registered build is not sent again)`;
  return undefined;
}

/** Each plan that did not start, with its code, reason, detail and fix (rule 6), each said once. */
export function failedExecutionsText(
  failed: FailedExecution[],
  total: number,
  context: FixContext = {},
): string {
  const lines = [`error: ${failed.length} of ${total} test plan${total === 1 ? "" : "s"} did not start:`];
  for (const f of failed) {
    lines.push(`  ${f.test_plan_id}: ${f.code}${f.reason ? ` (${f.reason})` : ""}, ${f.status}: ${f.detail}`);
    if (f.fix) lines.push(`    fix: ${f.fix}`);
    const command = failedExecutionCommand(f, context);
    if (command) lines.push(`    with this CLI: ${command}`);
  }
  // The generic word on a 404 only where the server said nothing more precise (rule 14).
  if (failed.some((f) => f.status === 404 && !f.fix)) lines.push(`  note: ${notFoundHint}`);
  return `${lines.join("\n")}\n`;
}

/** The app, version and file a command was about: what a fix text fills in. */
export interface FixContext {
  app?: string | undefined;
  version?: string | undefined;
  file?: string | undefined;
  /** The API base URL the command used (TESTBAY_URL or --url). */
  baseUrl?: string | undefined;
}

/** `/apps/{package}/versions/{version}…` of a failed call, decoded. */
function fromPath(path: string): FixContext {
  const match = /^\/apps\/([^/]+)(?:\/versions\/([^/]+))?/.exec(path);
  if (!match) return {};
  return {
    app: match[1] ? decodeURIComponent(match[1]) : undefined,
    version: match[2] ? decodeURIComponent(match[2]) : undefined,
  };
}

/**
 * What to type with this CLI for a refusal (rule 12), names filled in: the server's fix speaks HTTP, a person
 * at a pipeline's log wants the command.
 */
export function cliFix(error: TestbayApiError, context: FixContext = {}): string | undefined {
  const named = {
    ...context,
    ...Object.fromEntries(Object.entries(fromPath(error.path)).filter(([, v]) => v)),
  };
  const app = named.app ?? "PACKAGE";
  const version = named.version ?? "VERSION";
  switch (error.code) {
    case "app_not_found": {
      const didYouMean = error.problem.did_you_mean;
      if (typeof didYouMean === "string")
        return `testbay … --app ${didYouMean} (package names are case-sensitive)`;
      return `testbay apps create --app ${app} --platform android (or ios), then run this again`;
    }
    case "app_version_not_found":
      return `testbay upload --app ${app} --version ${version} --file ${named.file ?? "PATH"}`;
    case "test_plan_not_found": {
      const plan = /^\/testplans\/([^/]+)/.exec(error.path)?.[1];
      if (error.reason === "archived" && plan) return `testbay plans restore ${decodeURIComponent(plan)}`;
      return `testbay plans list --app ${app} (the IDs of this app's plans)`;
    }
    case "execution_not_found":
      return "testbay status EXECUTION_ID with an ID that `testbay run` or `testbay trigger` printed";
    default:
      return undefined;
  }
}

/**
 * A base URL without the API's version (`http://host:8080` for `http://host:8080/v1`) meets 404s on every call:
 * route_not_found from a Testbay server, a bare 404 from a proxy. Said as what it is, with the URL to use.
 */
function wrongBaseUrl(error: TestbayApiError, baseUrl: string | undefined): string | undefined {
  if (!baseUrl || error.status !== 404) return undefined;
  if (error.code !== "route_not_found" && error.code !== `http_${error.status}`) return undefined;
  const url = new URL(baseUrl);
  if (/\/v\d+\/?$/.test(url.pathname)) return undefined;
  const suggested = `${baseUrl.replace(/\/+$/, "")}/v1`;
  return [
    `error: TESTBAY_URL ${baseUrl} is not the API's address: it must end in /v1 (the server answered 404 ${error.code} to ${error.method} ${error.path}).`,
    `  fix: export TESTBAY_URL=${suggested} (or --url ${suggested})`,
    "",
  ].join("\n");
}

/** An error as the lines a person reads on stderr: what happened, the server's fix, and what a 404 means. */
export function errorText(error: unknown, context: FixContext = {}): string {
  if (error instanceof UsageError) return `error: ${error.message}\n`;
  if (error instanceof TestbayApiError) {
    const requestId = error.request_id ? `  request_id: ${error.request_id}\n` : "";
    // No plan started: each one's code, detail and fix is the whole story (the problem's own repeat them).
    if (error.failedExecutions.length > 0) {
      return `${failedExecutionsText(error.failedExecutions, error.failedExecutions.length, context)}${requestId}`;
    }
    const wrongUrl = wrongBaseUrl(error, context.baseUrl);
    if (wrongUrl) return `${wrongUrl}${requestId}`;
    const lines = [
      `error: ${error.code}${error.reason ? ` (${error.reason})` : ""}, ${error.status} on ${error.method} ${error.path}: ${error.detail}`,
    ];
    if (error.fix) lines.push(`  fix: ${error.fix}`);
    // A server that names the command in its fix already has said it with the real names.
    const command = error.fix?.includes("testbay ") ? undefined : cliFix(error, context);
    if (command) lines.push(`  with this CLI: ${command}`);
    // The generic word on a 404 only where nothing more precise is known (rule 14).
    if (error.status === 404 && !error.fix && !command) lines.push(`  note: ${notFoundHint}`);
    return `${lines.join("\n")}\n${requestId}`;
  }
  if (error instanceof TestbayGaveUpError) {
    const last = error.lastError;
    const lines = [
      `error: gave up on ${error.method} ${error.path} after ${error.attempts} attempt${error.attempts === 1 ? "" : "s"}.`,
    ];
    if (last instanceof TestbayApiError) {
      lines.push(`  last answer: ${last.status} ${last.code}: ${last.detail}`);
      if (last.status === 429) {
        lines.push(
          "  fix: this client is over its rate limit (other jobs may share it); wait, or give each pipeline its own client.",
        );
      } else
        lines.push(
          "  fix: the service or a proxy in front of it is briefly unavailable; run the job again later.",
        );
    } else {
      lines.push(`  last error: ${last.message}`);
      lines.push("  fix: check that TESTBAY_URL is reachable from this machine.");
    }
    return `${lines.join("\n")}\n`;
  }
  if (error instanceof TestbayNetworkError) {
    return `error: ${error.message}\n  fix: check that TESTBAY_URL is reachable from this machine; the request was not resent because it is not safe to repeat.\n`;
  }
  return `error: ${describeCause(error)}\n`;
}

/** An error as JSON for --json: the same facts, machine-readable. */
export function errorJson(error: unknown): Record<string, unknown> {
  if (error instanceof TestbayApiError) {
    return {
      type: "api_error",
      status: error.status,
      code: error.code,
      reason: error.reason,
      detail: error.detail,
      fix: error.fix,
      request_id: error.request_id,
      ...(error.failedExecutions.length ? { failed_executions: error.failedExecutions } : {}),
    };
  }
  if (error instanceof TestbayGaveUpError) {
    return { type: "gave_up", attempts: error.attempts, why: error.why, detail: error.message };
  }
  if (error instanceof UsageError) return { type: "usage", detail: error.message };
  return { type: "error", detail: describeCause(error) };
}
