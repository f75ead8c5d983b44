import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { planQuery } from "../../api/catalog.ts";
import { useMayChange } from "../../api/role.ts";
import { planRoute } from "../../app/router.tsx";
import { Fact } from "../../components/fact.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { formatDuration } from "../../format/duration.ts";
import { PlanActions } from "./plan-actions.tsx";
import { PlanStateChip } from "./plan-state-chip.tsx";
import { devicesSummary, stepSummary } from "./plan-summary.ts";
import { SchedulesSection } from "./schedules-section.tsx";
import { TrendsSection } from "./trends-section.tsx";
import { TriggerForm } from "./trigger-form.tsx";

/** One test plan: what it runs and where, its runs, and (for members) trigger, edit, archive, delete, restore. */
export function PlanPage() {
  const { planId } = planRoute.useParams();
  const plan = useQuery(planQuery(planId));
  const mayChange = useMayChange();

  if (plan.error) return <ProblemMessage error={plan.error} />;
  if (!plan.data) return <p className="text-muted">Loading the test plan…</p>;
  const data = plan.data;
  return (
    <div className="space-y-6">
      <header className="flex flex-wrap items-center gap-3">
        <h1 className="text-xl font-semibold break-all">{data.name}</h1>
        <PlanStateChip state={data.state} />
        <Link
          to="/runs"
          search={{ plan: data.id }}
          className="ml-auto rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken"
        >
          Runs of this plan
        </Link>
      </header>
      {data.state === "deleted" && (
        <p
          role="status"
          className="rounded-md bg-amber-50 p-3 text-sm text-amber-900 dark:bg-amber-950 dark:text-amber-100"
        >
          This plan is deleted. It can be restored until <Timestamp value={data.restorable_until} />.
        </p>
      )}
      <dl className="grid grid-cols-2 gap-x-6 gap-y-3 rounded-lg border border-line bg-surface p-4 text-sm sm:grid-cols-3 lg:grid-cols-4">
        <Fact label="App">{data.package_name}</Fact>
        <Fact label="Devices">{devicesSummary(data.devices)}</Fact>
        <Fact label="Timeout">{formatDuration(data.timeout_seconds * 1000)}</Fact>
        <Fact label="Max attempts">{data.max_attempts}</Fact>
        <Fact label="Plan">
          <code className="text-xs break-all">{data.id}</code>
        </Fact>
        <Fact label="Created">
          <Timestamp value={data.created_at} />
        </Fact>
        <Fact label="Changed">
          <Timestamp value={data.updated_at} />
        </Fact>
      </dl>
      {mayChange && data.state === "active" && (
        <section className="space-y-2 rounded-lg border border-line bg-surface p-4">
          <h2 className="font-semibold">Trigger</h2>
          <TriggerForm plan={data} />
        </section>
      )}
      {mayChange && <PlanActions plan={data} />}
      <TrendsSection planId={data.id} />
      <SchedulesSection plan={data} mayChange={mayChange} />
      <section className="space-y-2">
        <h2 className="font-semibold">Steps ({data.steps.length})</h2>
        <ol className="list-decimal space-y-1 pl-6 text-sm">
          {data.steps.map((step, index) => (
            // Steps have no IDs: their place in the plan is what names them.
            // biome-ignore lint/suspicious/noArrayIndexKey: a step is its position
            <li key={index}>{stepSummary(step)}</li>
          ))}
        </ol>
        <details className="text-sm">
          <summary className="cursor-pointer text-muted">Steps as JSON</summary>
          <pre className="mt-2 overflow-x-auto rounded-md bg-sunken p-3 font-mono text-xs">
            {JSON.stringify(data.steps, null, 2)}
          </pre>
        </details>
      </section>
    </div>
  );
}
