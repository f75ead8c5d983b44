import { useQuery } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useId } from "react";
import { appsQuery, plansQuery } from "../../api/catalog.ts";
import type { RunFilters } from "../../api/executions.ts";
import { filterControl } from "../../components/control-classes.ts";

const statuses = ["queued", "running", "passed", "failed", "errored", "cancelled"] as const;
// One height for selects, the text field and the button, so the labels above them line up.
const control = filterControl;

/** The filters live in the URL: a change navigates, so Back undoes it and the link can be shared. */
export function RunFiltersForm({ filters }: { filters: RunFilters }) {
  const navigate = useNavigate();
  const apps = useQuery(appsQuery);
  const plans = useQuery(plansQuery(filters.app));
  const ids = { app: useId(), plan: useId(), status: useId(), branch: useId() };

  const apply = (change: Partial<RunFilters>) =>
    navigate({
      to: "/runs",
      // A new filter starts from the newest run again; empty values leave the URL.
      search: Object.fromEntries(
        Object.entries({ ...filters, ...change, cursor: undefined }).filter(([, value]) => value),
      ) as RunFilters,
    });

  const submitBranch = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    apply({ branch: String(new FormData(event.currentTarget).get("branch") ?? "").trim() || undefined });
  };

  return (
    <form onSubmit={submitBranch} className="flex flex-wrap items-end gap-3" aria-label="Filter runs">
      <div className="flex flex-col gap-1">
        <label htmlFor={ids.app} className="text-xs text-muted">
          App
        </label>
        <select
          id={ids.app}
          className={control}
          value={filters.app ?? ""}
          onChange={(event) => apply({ app: event.target.value || undefined, plan: undefined })}
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
        <label htmlFor={ids.plan} className="text-xs text-muted">
          Test plan
        </label>
        <select
          id={ids.plan}
          className={control}
          value={filters.plan ?? ""}
          onChange={(event) => apply({ plan: event.target.value || undefined })}
        >
          <option value="">All plans</option>
          {plans.data?.map((plan) => (
            <option key={plan.id} value={plan.id}>
              {plan.name}
            </option>
          ))}
        </select>
      </div>
      <div className="flex flex-col gap-1">
        <label htmlFor={ids.status} className="text-xs text-muted">
          Status
        </label>
        <select
          id={ids.status}
          className={control}
          value={filters.status ?? ""}
          onChange={(event) => apply({ status: (event.target.value || undefined) as RunFilters["status"] })}
        >
          <option value="">Any status</option>
          {statuses.map((status) => (
            <option key={status} value={status}>
              {status}
            </option>
          ))}
        </select>
      </div>
      <div className="flex flex-col gap-1">
        <label htmlFor={ids.branch} className="text-xs text-muted">
          Branch
        </label>
        <div className="flex gap-2">
          <input
            id={ids.branch}
            name="branch"
            // A new URL (Back, a link) brings its own branch: the key makes the field show it.
            key={filters.branch ?? ""}
            defaultValue={filters.branch ?? ""}
            placeholder="main"
            className={`${control} w-40`}
          />
          <button type="submit" className="h-9 rounded-md border border-line px-3 text-sm hover:bg-sunken">
            Filter
          </button>
        </div>
      </div>
    </form>
  );
}
