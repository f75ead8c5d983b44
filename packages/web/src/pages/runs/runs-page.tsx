import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { plansQuery } from "../../api/catalog.ts";
import { executionsQuery } from "../../api/executions.ts";
import { runsRoute } from "../../app/router.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { RunFiltersForm } from "./run-filters-form.tsx";
import { RunsTable } from "./runs-table.tsx";

/** Every run of the organization, newest first, filtered and paged by what the URL says. */
export function RunsPage() {
  const filters = runsRoute.useSearch();
  const runs = useQuery(executionsQuery(filters));
  // The plans the filter form lists (the same query): the table names each run's plan from it.
  const plans = useQuery(plansQuery(filters.app));
  const filtered = Boolean(filters.app || filters.plan || filters.status || filters.branch);

  return (
    <section className="space-y-4">
      <h1 className="text-xl font-semibold">Runs</h1>
      <RunFiltersForm filters={filters} />
      {runs.error && <ProblemMessage error={runs.error} />}
      {runs.isPending && <p className="text-muted">Loading runs…</p>}
      {runs.data && runs.data.items.length === 0 && (
        <p className="text-muted">
          {filtered
            ? "No run matches these filters."
            : "No runs yet: trigger a test plan (testbay run) to see it here."}
        </p>
      )}
      {runs.data && runs.data.items.length > 0 && (
        <RunsTable runs={runs.data.items} plans={plans.data} plansSettled={!plans.isPending} />
      )}
      <nav aria-label="Pages of runs" className="flex gap-3 text-sm">
        {filters.cursor && (
          <Link to="/runs" search={{ ...filters, cursor: undefined }} className="text-accent underline">
            ← Newest
          </Link>
        )}
        {runs.data?.next_cursor && (
          <Link
            to="/runs"
            search={{ ...filters, cursor: runs.data.next_cursor }}
            className="text-accent underline"
          >
            Older runs →
          </Link>
        )}
      </nav>
    </section>
  );
}
