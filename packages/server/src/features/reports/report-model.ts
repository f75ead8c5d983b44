/**
 * What the report to share and the CTRF document are made from (report-source.ts gathers it): the execution
 * with its device runs, its tests as GET /executions/{id}/tests shows them, and what the report adds to them.
 */
import type { ExecutionRecord } from "../executions/index.ts";
import type { JunitQuarantine } from "../executions/junit-report.ts";
import type { TestCaseView } from "../executions/test-case-view.ts";

/** A failure group (API.md §16) as the report names it. */
export interface FailureGroupRef {
  signature: string;
  title: string;
}

/**
 * The failure group of each failed test of an execution, keyed by `testCaseKey`. The hook through which the
 * failures feature (GET /failures, API.md §16) tells the report its groups; without it the report says that
 * this server does not group failures.
 */
export interface FailureGroupsOfExecution {
  ofExecution(organizationId: string, executionId: string): Promise<ReadonlyMap<string, FailureGroupRef>>;
}

/** The screenshot of a failed test: a thumbnail, or why none is shown. */
export type ScreenshotShown =
  | { kind: "thumbnail"; name: string; dataUri: string; width: number; height: number }
  | { kind: "left-out"; name: string; why: string };

export interface ReportModel {
  execution: ExecutionRecord;
  /** The name of the client that triggered it (`client create --name`), as the dashboard shows it; null if none. */
  triggeredByName: string | null;
  tests: readonly TestCaseView[];
  /** The plan's quarantined tests now, by test ID (features/tests). */
  quarantines: ReadonlyMap<string, JunitQuarantine>;
  /** By `testCaseKey`, for failed tests with a screenshot among their final try's artifacts. */
  screenshots: ReadonlyMap<string, ScreenshotShown>;
  /** Null: the server has no failure groups to give (no FailureGroupsOfExecution). */
  groups: ReadonlyMap<string, FailureGroupRef> | null;
  /** When the report was made (ISO 8601). */
  generatedAt: string;
}

/** One test of one device run (and shard): a test that ran on two devices is two test cases. */
export function testCaseKey(test: Pick<TestCaseView, "id" | "shard" | "device">): string {
  return `${test.device.position}/${test.shard}/${test.id}`;
}

export const isFailure = (test: Pick<TestCaseView, "status">) =>
  test.status === "failed" || test.status === "errored";
