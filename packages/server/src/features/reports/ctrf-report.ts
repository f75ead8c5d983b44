/**
 * An execution in the Common Test Report Format (CTRF JSON, spec version 0.0.0 as the npm package `ctrf`
 * publishes its schema), for the reporters and dashboards that read it (API.md §16, GET /executions/{id}/ctrf).
 *
 * One CTRF test per test case of the report (a test that ran on two devices is two, told apart by `device` and
 * its suite). Mapped as the JUnit report maps them (features/executions/junit-report.ts): `errored` is failed
 * with rawStatus "errored"; a quarantined test that failed did not fail the execution and must not fail a CI job
 * reading this document, so it is skipped with rawStatus "failed", the tag "quarantined", and its message and
 * trace kept. Earlier tries are `retryAttempts`; artifacts are attachments with their download path.
 */
import type { TestCaseStatus } from "../../db/schema.ts";
import { deviceName } from "../executions/device-name.ts";
import type { TestCaseView } from "../executions/test-case-view.ts";
import { isFailure, type ReportModel, testCaseKey } from "./report-model.ts";

export const ctrfSpecVersion = "0.0.0";

type CtrfStatus = "passed" | "failed" | "skipped" | "pending" | "other";

const statusOf = (status: TestCaseStatus): CtrfStatus => (status === "errored" ? "failed" : status);

const ms = (iso: string | null): number | undefined => {
  const time = iso ? new Date(iso).getTime() : Number.NaN;
  return Number.isNaN(time) ? undefined : time;
};

/** Only the fields that have a value: CTRF's schema refuses null where it wants a string. */
function defined<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(
    Object.entries(object).filter(([, v]) => v !== undefined && v !== null),
  ) as Partial<T>;
}

function artifactPath(executionId: string, test: TestCaseView, attempt: number, name: string): string {
  return `/v1/executions/${executionId}/artifacts/${name.split("/").map(encodeURIComponent).join("/")}?device=${test.device.position}&shard=${test.shard}&attempt=${attempt}`;
}

function contentTypeOf(name: string): string {
  const extension = name.slice(name.lastIndexOf(".") + 1).toLowerCase();
  const known: Record<string, string> = {
    png: "image/png",
    jpg: "image/jpeg",
    jpeg: "image/jpeg",
    webp: "image/webp",
    gif: "image/gif",
    mp4: "video/mp4",
    webm: "video/webm",
    txt: "text/plain",
    log: "text/plain",
    json: "application/json",
    xml: "application/xml",
    zip: "application/zip",
    pdf: "application/pdf",
  };
  return known[extension] ?? "application/octet-stream";
}

export function ctrfReport(model: ReportModel, reportId: string) {
  const { execution } = model;
  const executionId = execution.id;
  const tests = model.tests.map((test) => {
    const quarantine = isFailure(test) ? model.quarantines.get(test.id) : undefined;
    const group = model.groups?.get(testCaseKey(test));
    const earlier = test.attempts.slice(0, -1);
    const attachments = (attempt: number, names: string[]) =>
      names.map((name) => ({
        name,
        contentType: contentTypeOf(name),
        path: artifactPath(executionId, test, attempt, name),
      }));
    return defined({
      testId: test.id,
      name: test.name || "(unnamed)",
      status: quarantine ? ("skipped" as const) : statusOf(test.status),
      rawStatus: quarantine || test.status === "errored" ? test.status : undefined,
      duration: Math.max(0, Math.round(test.duration_ms ?? 0)),
      suite: [
        `device ${test.device.position + 1}${test.shard > 0 ? ` shard ${test.shard + 1}` : ""}`,
        test.classname || "(no class)",
      ],
      message: quarantine
        ? `Quarantined by ${quarantine.quarantinedBy} (${quarantine.reason}); it ${test.status}: ${test.message ?? "no message"}`
        : (test.message ?? undefined),
      trace: test.stack_trace ?? undefined,
      device: deviceName(test.device),
      flaky: test.flaky,
      retries: earlier.length,
      retryAttempts:
        earlier.length > 0
          ? earlier.map((t, index) =>
              defined({
                attempt: index + 1,
                status: statusOf(t.status),
                duration: Math.max(0, Math.round(t.duration_ms ?? 0)),
                message: t.message ?? undefined,
                attachments: t.artifacts.length > 0 ? attachments(t.attempt, t.artifacts) : undefined,
                extra: { device_run_attempt: t.attempt, retry: t.retry },
              }),
            )
          : undefined,
      tags: quarantine ? ["quarantined"] : undefined,
      attachments: test.artifacts.length > 0 ? attachments(test.attempt, test.artifacts) : undefined,
      extra: defined({
        classname: test.classname,
        device_position: test.device.position,
        shard: test.shard,
        device_run_attempt: test.attempt,
        failure_group: group ? { signature: group.signature, title: group.title } : undefined,
        video_offset_ms: test.video_offset_ms ?? undefined,
      }),
    });
  });
  const count = (status: CtrfStatus) => tests.filter((t) => t.status === status).length;
  const start = ms(execution.startedAt) ?? ms(execution.createdAt) ?? 0;
  const stop = ms(execution.finishedAt) ?? ms(model.generatedAt) ?? start;
  const ci = execution.ci ?? {};
  const planName = typeof execution.plan.name === "string" ? execution.plan.name : undefined;
  return {
    reportFormat: "CTRF" as const,
    specVersion: ctrfSpecVersion,
    reportId,
    runId: executionId,
    timestamp: model.generatedAt,
    generatedBy: "Testbay",
    results: {
      tool: { name: "Testbay", extra: { step_types: stepTypes(execution.plan) } },
      summary: {
        tests: tests.length,
        passed: count("passed"),
        failed: count("failed"),
        skipped: count("skipped"),
        pending: count("pending"),
        other: count("other"),
        flaky: tests.filter((t) => t.flaky).length,
        suites: execution.deviceRuns.length,
        start,
        stop,
        duration: Math.max(0, stop - start),
        extra: {
          execution_status: execution.status,
          quarantined_failures: count("skipped") - model.tests.filter((t) => t.status === "skipped").length,
        },
      },
      tests,
      environment: defined({
        reportName: planName,
        appName: execution.packageName ?? undefined,
        appVersion: execution.version ?? undefined,
        buildUrl: ci.build_url,
        commit: ci.commit,
        branchName: ci.branch,
        healthy: execution.status === "passed",
        extra: defined({
          execution_id: executionId,
          test_plan_id: execution.testPlanId ?? undefined,
          ci_provider: ci.provider,
          pull_request: ci.pull_request,
        }),
      }),
    },
    extra: { testbay: { execution_id: executionId, status: execution.status } },
  };
}

function stepTypes(plan: Record<string, unknown>): string[] {
  const steps = Array.isArray(plan.steps) ? (plan.steps as Array<{ type?: unknown }>) : [];
  return [...new Set(steps.map((s) => s.type).filter((t): t is string => typeof t === "string"))];
}
