import type { Testbay } from "../sdk/client.ts";
import { TestbayApiError } from "../sdk/errors.ts";
import { segment } from "../sdk/transport.ts";

/** Where a failure group was first (or last) seen (API.md §16 `GET /failures`). */
export interface SeenAt {
  execution_id: string;
  version?: string | null;
  commit?: string | null;
  at?: string | null;
}

/** The part of a failure group (API.md §16) a check run's annotation says. */
export interface FailureGroup {
  signature: string;
  title?: string;
  status?: string;
  first_seen: SeenAt;
  last_seen?: SeenAt;
}

/** A test's history in its plan's last executions (`GET /tests?test_plan_id=`). */
export interface TestHistory {
  id: string;
  runs: number;
  failures: number;
  flaky_runs: number;
  last_execution_id: string | null;
}

/** Pages through a list answer `{items, next_cursor}`, at most `maxPages` pages. */
async function allPages<T>(
  testbay: Testbay,
  pathName: string,
  query: Record<string, string | number | undefined>,
  maxPages = 20,
): Promise<T[]> {
  const items: T[] = [];
  let cursor: string | undefined;
  for (let page = 0; page < maxPages; page++) {
    const { body } = await testbay.transport.json<{ items: T[]; next_cursor: string | null }>({
      method: "GET",
      path: pathName,
      query: { ...query, cursor },
    });
    items.push(...body.items);
    if (!body.next_cursor) break;
    cursor = body.next_cursor;
  }
  return items;
}

/** A failure group's occurrence (`GET /failures/{signature}/occurrences`): which test failed with it where. */
interface Occurrence {
  execution_id: string;
  test_id: string | null;
  at: string;
}

/** The failure groups an execution's failed tests belong to, by signature and by test id. */
export interface ExecutionGroups {
  bySignature: Map<string, FailureGroup>;
  byTest: Map<string, FailureGroup>;
}

/**
 * The failure groups of an execution's failures (API.md §16), or undefined when the server has no failure groups
 * (a server older than §16 answers 404): then failures are told apart by the tests' own history (failureKind in
 * failure-kind.ts). The groups are those of its plan seen since the execution was triggered; which test is in
 * which comes from each group's occurrences, newest execution first, read until they are older than this one
 * (the test cases' listing does not carry their signature).
 */
export async function failureGroupsOfExecution(
  testbay: Testbay,
  execution: { id: string; test_plan_id: string | null; created_at: string },
): Promise<ExecutionGroups | undefined> {
  if (execution.test_plan_id === null) return undefined;
  let groups: FailureGroup[];
  try {
    groups = await allPages<FailureGroup>(testbay, "/failures", {
      test_plan_id: execution.test_plan_id,
      since: execution.created_at,
      limit: 200,
    });
  } catch (error) {
    if (error instanceof TestbayApiError && error.status === 404) return undefined;
    throw error;
  }
  const byTest = new Map<string, FailureGroup>();
  const since = Date.parse(execution.created_at);
  for (const group of groups) {
    let cursor: string | undefined;
    for (let page = 0; page < 20; page++) {
      const { body } = await testbay.transport.json<{ items: Occurrence[]; next_cursor: string | null }>({
        method: "GET",
        path: occurrencesPath(group.signature),
        query: { test_plan_id: execution.test_plan_id, limit: 200, cursor },
      });
      for (const o of body.items)
        if (o.execution_id === execution.id && o.test_id) byTest.set(o.test_id, group);
      const last = body.items.at(-1);
      if (!body.next_cursor || !last || Date.parse(last.at) < since) break;
      cursor = body.next_cursor;
    }
  }
  return { bySignature: new Map(groups.map((g) => [g.signature, g])), byTest };
}

/** The plan's tests' history by test id (flaky runs and failures in its last executions). */
export async function testHistoryOfPlan(
  testbay: Testbay,
  testPlanId: string,
): Promise<Map<string, TestHistory>> {
  const items = await allPages<TestHistory>(testbay, "/tests", {
    test_plan_id: testPlanId,
    window: 20,
    limit: 1000,
  });
  return new Map(items.map((t) => [t.id, t]));
}

/** A failure group's occurrences, newest first. */
export const occurrencesPath = (signature: string) => `/failures/${segment(signature)}/occurrences`;
