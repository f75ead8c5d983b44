import { useQuery } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useId } from "react";
import { appsQuery, plansQuery } from "../../api/catalog.ts";
import type { RunFilters } from "../../api/executions.ts";
import { versionsQuery } from "../../api/plans.ts";
import { AppFilter } from "../../components/app-filter.tsx";
import { filterControl } from "../../components/control-classes.ts";
import { LabelledSelect } from "../../components/labelled-select.tsx";

const statuses = ["queued", "running", "passed", "failed", "errored", "cancelled"] as const;
// The branch field shares the selects' height (the button too), so the labels above them line up.
const control = filterControl;

/** The filters live in the URL: a change navigates, so Back undoes it and the link can be shared. */
export function RunFiltersForm({ filters }: { filters: RunFilters }) {
  const navigate = useNavigate();
  const apps = useQuery(appsQuery);
  const plans = useQuery(plansQuery(filters.app));
  const versions = useQuery({ ...versionsQuery(filters.app ?? ""), enabled: filters.app !== undefined });

  const apply = (change: Partial<RunFilters>) =>
    navigate({
      to: "/runs",
      // A new filter starts from the newest run again; empty values leave the URL.
      search: Object.fromEntries(
        Object.entries({ ...filters, ...change, cursor: undefined }).filter(([, value]) => value),
      ) as RunFilters,
    });

  const submitText = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const field = (name: string) => String(form.get(name) ?? "").trim() || undefined;
    apply({ branch: field("branch"), commit: field("commit") });
  };

  return (
    <form onSubmit={submitText} className="flex flex-wrap items-end gap-3" aria-label="Filter runs">
      <AppFilter
        apps={apps.data}
        value={filters.app ?? ""}
        onChange={(value) => apply({ app: value || undefined, version: undefined, plan: undefined })}
      />
      <LabelledSelect
        label="Version"
        value={filters.version ?? ""}
        disabled={filters.app === undefined}
        title={filters.app === undefined ? "Choose an app first" : undefined}
        onChange={(value) => apply({ version: value || undefined })}
      >
        <option value="">All versions</option>
        {/* A version from a link may be older than the newest 100: it stays selectable. */}
        {filters.version && !versions.data?.some((v) => v.version === filters.version) && (
          <option value={filters.version}>{filters.version}</option>
        )}
        {versions.data?.map((v) => (
          <option key={v.version} value={v.version}>
            {v.version}
          </option>
        ))}
      </LabelledSelect>
      <LabelledSelect
        label="Test plan"
        value={filters.plan ?? ""}
        onChange={(value) => apply({ plan: value || undefined })}
      >
        <option value="">All plans</option>
        {plans.data?.map((plan) => (
          <option key={plan.id} value={plan.id}>
            {plan.name}
          </option>
        ))}
      </LabelledSelect>
      <LabelledSelect
        label="Status"
        value={filters.status ?? ""}
        onChange={(value) => apply({ status: (value || undefined) as RunFilters["status"] })}
      >
        <option value="">Any status</option>
        {statuses.map((status) => (
          <option key={status} value={status}>
            {status}
          </option>
        ))}
      </LabelledSelect>
      <TextFilter label="Branch" name="branch" value={filters.branch} placeholder="main" className="w-40" />
      <TextFilter
        label="Commit"
        name="commit"
        value={filters.commit}
        placeholder="full SHA"
        className="w-44 font-mono"
      />
      <button type="submit" className="h-9 rounded-md border border-line px-3 text-sm hover:bg-sunken">
        Filter
      </button>
    </form>
  );
}

/** A text filter of the bar, sent with the form's Filter button (or Enter). */
function TextFilter(props: {
  label: string;
  name: string;
  value: string | undefined;
  placeholder: string;
  className: string;
}) {
  const id = useId();
  return (
    <div className="flex flex-col gap-1">
      <label htmlFor={id} className="text-xs text-muted">
        {props.label}
      </label>
      <input
        id={id}
        name={props.name}
        // A new URL (Back, a link) brings its own value: the key makes the field show it.
        key={props.value ?? ""}
        defaultValue={props.value ?? ""}
        placeholder={props.placeholder}
        spellCheck={false}
        className={`${control} ${props.className}`}
      />
    </div>
  );
}
