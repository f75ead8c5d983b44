import { useQuery } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { useId } from "react";
import { appsQuery } from "../../api/catalog.ts";
import { planListQuery, planStates, type TestPlanState } from "../../api/plans.ts";
import { useMayChange } from "../../api/role.ts";
import { plansRoute } from "../../app/router.tsx";
import { filterControl } from "../../components/control-classes.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { PlansList } from "./plans-list.tsx";

const control = filterControl;

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
  const plans = useQuery(planListQuery(search.app, state));
  const mayChange = useMayChange();
  const ids = { app: useId(), state: useId() };

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
        <div className="flex flex-col gap-1">
          <label htmlFor={ids.app} className="text-xs text-muted">
            App
          </label>
          <select
            id={ids.app}
            className={control}
            value={search.app ?? ""}
            onChange={(event) =>
              navigate({ to: "/plans", search: { ...search, app: event.target.value || undefined } })
            }
          >
            <option value="">All apps</option>
            {apps.data?.map((app) => (
              <option key={app.package_name} value={app.package_name}>
                {app.display_name ? `${app.display_name} (${app.package_name})` : app.package_name}
              </option>
            ))}
          </select>
        </div>
        <div className="flex flex-col gap-1">
          <label htmlFor={ids.state} className="text-xs text-muted">
            State
          </label>
          <select
            id={ids.state}
            className={control}
            value={state}
            onChange={(event) =>
              navigate({
                to: "/plans",
                search: {
                  ...search,
                  state: event.target.value === "active" ? undefined : (event.target.value as TestPlanState),
                },
              })
            }
          >
            {planStates.map((value) => (
              <option key={value} value={value}>
                {value}
              </option>
            ))}
          </select>
        </div>
      </form>
      {plans.error && <ProblemMessage error={plans.error} />}
      {plans.isPending && <p className="text-muted">Loading test plans…</p>}
      {plans.data && plans.data.length === 0 && <p className="text-muted">{empty[state]}</p>}
      {plans.data && plans.data.length > 0 && <PlansList plans={plans.data} deleted={state === "deleted"} />}
    </section>
  );
}
