import { queryOptions } from "@tanstack/react-query";
import { api } from "./client.ts";
import { unwrap } from "./problem.ts";
import { type Execution, type ExecutionStatus, finalStatuses, type TestCase } from "./types.ts";

/** The runs list's filters, as they stand in the page's URL (so a filtered list can be shared as a link). */
export interface RunFilters {
  app?: string;
  plan?: string;
  status?: ExecutionStatus;
  branch?: string;
  cursor?: string;
}

/** While a run can still change, its page asks again every 2 s (server-sent events will replace this). */
const livePollMs = 2_000;
const whileRunning = (execution: Execution | undefined) =>
  execution && finalStatuses.has(execution.status) ? false : livePollMs;

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
              test_plan_id: filters.plan,
              status: filters.status,
              branch: filters.branch,
              cursor: filters.cursor,
            },
          },
        }),
      ),
    // A list with runs still going keeps its counts current.
    refetchInterval: (query) =>
      query.state.data?.items.some((run) => !finalStatuses.has(run.status)) ? livePollMs : false,
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
    refetchInterval: live ? livePollMs : false,
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
    refetchInterval: live ? livePollMs : false,
  });

/** The run's log as text: the agent's lines, appended while it runs. */
export const logQuery = (id: string, live: boolean) =>
  queryOptions({
    queryKey: ["execution", id, "log"],
    queryFn: async () =>
      unwrap(await api.GET("/v1/executions/{id}/log", { params: { path: { id } }, parseAs: "text" })),
    refetchInterval: live ? livePollMs : false,
  });

/** Where the browser downloads the run's JUnit XML (the session cookie authenticates a plain link). */
export const junitUrl = (id: string) => `/v1/executions/${encodeURIComponent(id)}/junit`;
