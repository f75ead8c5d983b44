import { useInfiniteQuery, useQuery } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { appsQuery } from "../../api/catalog.ts";
import { planListQuery, planStates, type TestPlanState } from "../../api/plans.ts";
import { useMayChange } from "../../api/role.ts";
import { plansRoute } from "../../app/router.tsx";
import { AppFilter } from "../../components/app-filter.tsx";
import { LabelledSelect } from "../../components/labelled-select.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { PlansList } from "./plans-list.tsx";

const empty: Record<TestPlanState, string> = {
  active: "No active test plans. Create one to run tests on an uploaded version.",
  archived: "No archived test plans.",
  deleted: "No deleted test plans. A deleted plan stays here, restorable, for 30 days.",
};

/** The organization's test plans by app and state, each with what it runs and where. */
export function PlansPage() {
  const search = plansRoute.useSearch();
  const state = search.state ?? "active";
  const navigate = useNavigate();
  const apps = useQuery(appsQuery);
  const plans = useInfiniteQuery(planListQuery(search.app, state));
  const items = plans.data?.pages.flatMap((page) => page.items);
  const mayChange = useMayChange();

  return (
    <section className="space-y-4">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold">Test plans</h1>
        {mayChange && (
          <Link
            to="/plans/new"
            search={{ app: search.app }}
            className="ml-auto rounded-md bg-accent px-3 py-1.5 text-sm font-medium text-accent-ink hover:opacity-90"
          >
            New test plan
          </Link>
        )}
      </div>
      <form className="flex flex-wrap items-end gap-3" aria-label="Filter test plans">
        <AppFilter
          apps={apps.data}
          value={search.app ?? ""}
          onChange={(value) => navigate({ to: "/plans", search: { ...search, app: value || undefined } })}
        />
        <LabelledSelect
          label="State"
          value={state}
          onChange={(value) =>
            navigate({
              to: "/plans",
              search: { ...search, state: value === "active" ? undefined : (value as TestPlanState) },
            })
          }
        >
          {planStates.map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </LabelledSelect>
      </form>
      {plans.error && <ProblemMessage error={plans.error} />}
      {plans.isPending && <p className="text-muted">Loading test plans…</p>}
      {items && items.length === 0 && <p className="text-muted">{empty[state]}</p>}
      {items && items.length > 0 && <PlansList plans={items} deleted={state === "deleted"} />}
      {plans.hasNextPage && (
        <div className="flex items-center gap-3 text-sm">
          <button
            type="button"
            className="rounded-md border border-line px-3 py-1.5 hover:bg-sunken disabled:opacity-50"
            disabled={plans.isFetchingNextPage}
            onClick={() => plans.fetchNextPage()}
          >
            {plans.isFetchingNextPage ? "Loading more…" : "Show more"}
          </button>
          <span className="text-muted">{items?.length} shown</span>
        </div>
      )}
    </section>
  );
}
