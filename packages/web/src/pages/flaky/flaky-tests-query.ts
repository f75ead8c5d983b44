import { queryOptions } from "@tanstack/react-query";
import { api } from "../../api/client.ts";
import { unwrap } from "../../api/problem.ts";
import type { TestHistory } from "../../api/test-history.ts";

/**
 * The plan's tests that were flaky (failed, then passed on a retry) in its recent runs, the flakiest first. Keyed
 * under ["test-history", planId] so that a quarantine (api/quarantine.ts quarantineChanged) reads it again.
 */
export const flakyTestsQuery = (planId: string) =>
  queryOptions({
    queryKey: ["test-history", planId, "flaky"],
    queryFn: async () => {
      const page = unwrap(
        await api.GET("/v1/tests", { params: { query: { test_plan_id: planId, limit: 1000 } } }),
      );
      return flakiestFirst(page.items);
    },
  });

/** Tests with at least one flaky run, by flaky rate, then by flaky runs, then by name. */
export function flakiestFirst(tests: readonly TestHistory[]): TestHistory[] {
  return tests
    .filter((test) => test.flaky_runs > 0)
    .sort(
      (a, b) =>
        b.flaky_rate - a.flaky_rate ||
        b.flaky_runs - a.flaky_runs ||
        `${a.classname}.${a.name}`.localeCompare(`${b.classname}.${b.name}`),
    );
}
