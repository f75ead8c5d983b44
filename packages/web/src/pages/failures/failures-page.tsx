import { useQuery } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { appsQuery, plansQuery } from "../../api/catalog.ts";
import { failuresRoute } from "../../app/router.tsx";
import { AppFilter } from "../../components/app-filter.tsx";
import { LabelledSelect } from "../../components/labelled-select.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { FailureStatusBadge } from "./failure-status-badge.tsx";
import { type FailureGroup, failureGroupsQuery } from "./failures-api.ts";
import { GroupOccurrences } from "./group-occurrences.tsx";

/**
 * Failures grouped across tests and runs (API.md §16), the most recently seen first: each group with its status,
 * how often and in how many tests it happened, and where it was first and last seen. A group opens on its
 * occurrences and its example's message, stack and screenshot.
 */
export function FailuresPage() {
  const search = failuresRoute.useSearch();
  const navigate = useNavigate({ from: "/failures" });
  const apps = useQuery(appsQuery);
  const plans = useQuery(plansQuery(search.app));
  const filters = { app: search.app, plan: search.plan };
  const groups = useQuery(failureGroupsQuery(filters));

  return (
    <div className="space-y-4">
      <h1 className="text-xl font-semibold">Failures</h1>
      <div className="flex flex-wrap items-end gap-3">
        <AppFilter
          apps={apps.data}
          value={search.app ?? ""}
          onChange={(app) => navigate({ search: { app: app || undefined } })}
        />
        <LabelledSelect
          label="Test plan"
          value={search.plan ?? ""}
          onChange={(plan) => navigate({ search: (old) => ({ app: old.app, plan: plan || undefined }) })}
        >
          <option value="">All plans</option>
          {plans.data?.map((plan) => (
            <option key={plan.id} value={plan.id}>
              {plan.name}
            </option>
          ))}
        </LabelledSelect>
      </div>
      {groups.error && <ProblemMessage error={groups.error} />}
      {!groups.data && !groups.error && <p className="text-muted">Loading the failures…</p>}
      {groups.data?.items.length === 0 && (
        <p className="text-muted">No failures{search.app || search.plan ? " for these filters" : " yet"}.</p>
      )}
      <ul className="space-y-3">
        {groups.data?.items.map((group) => (
          <GroupItem key={group.signature} group={group} open={search.group === group.signature} />
        ))}
      </ul>
    </div>
  );
}

function GroupItem({ group, open }: { group: FailureGroup; open: boolean }) {
  const search = failuresRoute.useSearch();
  const filters = { app: search.app, plan: search.plan };
  return (
    <li className="rounded-lg border border-line bg-surface p-3" aria-label={group.title}>
      <div className="flex flex-wrap items-start gap-x-3 gap-y-1">
        <FailureStatusBadge status={group.status} />
        <Link
          from="/failures"
          search={(old) => ({ ...old, group: open ? undefined : group.signature })}
          aria-expanded={open}
          className="min-w-0 flex-1 font-mono text-sm break-all hover:underline"
        >
          {group.title}
        </Link>
      </div>
      <dl className="mt-2 grid grid-cols-2 gap-x-4 gap-y-1 text-xs sm:grid-cols-4">
        <Count label="Occurrences" value={group.occurrences} />
        <Count label="Tests" value={group.tests} />
        <Seen label="First seen" seen={group.first_seen} />
        <Seen label="Last seen" seen={group.last_seen} />
      </dl>
      {open && (
        <div className="mt-3">
          <GroupOccurrences group={group} filters={filters} />
        </div>
      )}
    </li>
  );
}

function Count({ label, value }: { label: string; value: number }) {
  return (
    <div>
      <dt className="text-muted">{label}</dt>
      <dd className="text-sm font-medium">{value}</dd>
    </div>
  );
}

function Seen({ label, seen }: { label: string; seen: FailureGroup["first_seen"] }) {
  return (
    <div>
      <dt className="text-muted">{label}</dt>
      <dd>
        <Link to="/runs/$runId" params={{ runId: seen.execution_id }} className="text-accent underline">
          <Timestamp value={seen.at} />
        </Link>
        {seen.version && <span className="text-muted"> · {seen.version}</span>}
      </dd>
    </div>
  );
}
