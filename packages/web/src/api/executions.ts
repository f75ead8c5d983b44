import { queryOptions } from "@tanstack/react-query";
import { api } from "./client.ts";
import { pollUnlessLive } from "./live-updates.ts";
import { unwrap } from "./problem.ts";
import { type Execution, type ExecutionStatus, finalStatuses, type TestCase } from "./types.ts";

/** The runs list's filters, as they stand in the page's URL (so a filtered list can be shared as a link). */
export interface RunFilters {
  app?: string;
  /** Only with `app`: a version is an app's. */
  version?: string;
  plan?: string;
  status?: ExecutionStatus;
  branch?: string;
  /** A commit SHA as the CI gave it (the full one: the API matches it exactly). */
  commit?: string;
  cursor?: string;
}

// While a run can still change, its queries are read again on each live update (api/live-updates.ts); they poll
// only while the event stream is down.
const whileRunning = (execution: Execution | undefined) =>
  execution && finalStatuses.has(execution.status) ? false : pollUnlessLive();

export const executionsQuery = (filters: RunFilters) =>
  queryOptions({
    queryKey: ["executions", filters],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/executions", {
          params: {
            query: {
              limit: 25,
              package_name: filters.app,
              version: filters.app ? filters.version : undefined,
              test_plan_id: filters.plan,
              status: filters.status,
              branch: filters.branch,
              commit: filters.commit,
              cursor: filters.cursor,
            },
          },
        }),
      ),
    // A list with runs still going keeps its counts current.
    refetchInterval: (query) =>
      query.state.data?.items.some((run) => !finalStatuses.has(run.status)) ? pollUnlessLive() : false,
  });

export const executionQuery = (id: string) =>
  queryOptions({
    queryKey: ["execution", id],
    queryFn: async () => unwrap(await api.GET("/v1/executions/{id}", { params: { path: { id } } })),
    refetchInterval: (query) => whileRunning(query.state.data),
  });

/** The failed tests, shown first on a run's page with their message and stack trace. */
export const failedTestsQuery = (id: string, live: boolean) =>
  queryOptions({
    queryKey: ["execution", id, "tests", "failed"],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/executions/{id}/tests", {
          params: { path: { id }, query: { status: "failed", limit: 200 } },
        }),
      ).items,
    refetchInterval: live ? pollUnlessLive : false,
  });

/** Every test of the run, all pages of them (a run of 5,000 tests is five calls), for the virtualized table. */
export const allTestsQuery = (id: string, live: boolean) =>
  queryOptions({
    queryKey: ["execution", id, "tests", "all"],
    queryFn: async () => {
      const tests: TestCase[] = [];
      let cursor: string | undefined;
      do {
        const page = unwrap(
          await api.GET("/v1/executions/{id}/tests", {
            params: { path: { id }, query: { limit: 1000, cursor } },
          }),
        );
        tests.push(...page.items);
        cursor = page.next_cursor ?? undefined;
      } while (cursor);
      return tests;
    },
    refetchInterval: live ? pollUnlessLive : false,
  });

/** The run's log as text: the agent's lines, appended while it runs. */
export const logQuery = (id: string, live: boolean) =>
  queryOptions({
    queryKey: ["execution", id, "log"],
    queryFn: async () =>
      unwrap(await api.GET("/v1/executions/{id}/log", { params: { path: { id } }, parseAs: "text" })),
    refetchInterval: live ? pollUnlessLive : false,
  });

/** Where the browser downloads the run's JUnit XML (the session cookie authenticates a plain link). */
export const junitUrl = (id: string) => `/v1/executions/${encodeURIComponent(id)}/junit`;
