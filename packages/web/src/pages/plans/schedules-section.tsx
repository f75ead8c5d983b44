import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useId, useState } from "react";
import type { TestPlan } from "../../api/types.ts";
import { ConfirmButton } from "../../components/confirm-button.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { cronInWords, scheduleVersionInWords } from "./cron-words.ts";
import { ScheduleForm } from "./schedule-form.tsx";
import { deleteSchedule, type Schedule, schedulesQuery, updateSchedule } from "./schedules-api.ts";

const button = "rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken disabled:opacity-50";

/**
 * The plan's schedules (API.md §15): when each runs, in words and as its cron expression, in which time zone, on
 * which version, its next time in the viewer's own time, and what became of its last time (a skipped time says
 * why). Members and admins add, enable, disable and delete them; viewers read.
 */
export function SchedulesSection({ plan, mayChange }: { plan: TestPlan; mayChange: boolean }) {
  const schedules = useQuery(schedulesQuery(plan.id));
  const [adding, setAdding] = useState(false);
  const headingId = useId();
  const mayAdd = mayChange && plan.state === "active";

  return (
    <section aria-labelledby={headingId} className="space-y-3 rounded-lg border border-line bg-surface p-4">
      <div className="flex flex-wrap items-center gap-2">
        <h2 id={headingId} className="font-semibold">
          Schedules
        </h2>
        {mayAdd && !adding && (
          <button type="button" className={`${button} ml-auto`} onClick={() => setAdding(true)}>
            Add schedule
          </button>
        )}
      </div>
      {adding && <ScheduleForm plan={plan} onDone={() => setAdding(false)} />}
      {schedules.error && <ProblemMessage error={schedules.error} />}
      {schedules.data?.length === 0 && (
        <p className="text-sm text-muted">
          This plan runs only when triggered.{mayAdd ? " Add a schedule to run it at set times." : ""}
        </p>
      )}
      {schedules.data && schedules.data.length > 0 && (
        <ul className="divide-y divide-line">
          {schedules.data.map((schedule) => (
            <ScheduleItem key={schedule.id} schedule={schedule} mayChange={mayChange} />
          ))}
        </ul>
      )}
    </section>
  );
}

function ScheduleItem({ schedule, mayChange }: { schedule: Schedule; mayChange: boolean }) {
  const queries = useQueryClient();
  const refresh = () => queries.invalidateQueries({ queryKey: ["schedules", schedule.test_plan_id] });
  const toggle = useMutation({
    mutationFn: () => updateSchedule(schedule.id, { enabled: !schedule.enabled }),
    onSuccess: refresh,
  });
  const remove = useMutation({ mutationFn: () => deleteSchedule(schedule.id), onSuccess: refresh });
  const words = cronInWords(schedule.cron);
  const busy = toggle.isPending || remove.isPending;

  return (
    <li className="space-y-1 py-3 text-sm first:pt-0 last:pb-0" aria-label={`Schedule ${schedule.cron}`}>
      <div className="flex flex-wrap items-center gap-x-3 gap-y-1">
        <span className="font-medium">{words ?? "Cron"}</span>
        <code className="rounded bg-sunken px-1.5 py-0.5 font-mono text-xs">{schedule.cron}</code>
        <span className="text-muted">{schedule.timezone}</span>
        <span
          className={`rounded-full px-2 py-0.5 text-xs font-medium ${
            schedule.enabled
              ? "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100"
              : "bg-zinc-200 text-zinc-700 dark:bg-zinc-700 dark:text-zinc-200"
          }`}
        >
          {schedule.enabled ? "enabled" : "disabled"}
        </span>
        {mayChange && (
          <span className="ml-auto flex gap-2">
            <button type="button" className={button} disabled={busy} onClick={() => toggle.mutate()}>
              {schedule.enabled ? "Disable" : "Enable"}
            </button>
            <DeleteScheduleButton cron={schedule.cron} disabled={busy} onConfirm={() => remove.mutate()} />
          </span>
        )}
      </div>
      <p className="text-muted">
        {scheduleVersionInWords(schedule.version)} · Next run:{" "}
        {schedule.next_run_at ? <Timestamp value={schedule.next_run_at} /> : "none while disabled"}
      </p>
      <LastResult schedule={schedule} />
      {toggle.error && <ProblemMessage error={toggle.error} />}
      {remove.error && <ProblemMessage error={remove.error} />}
    </li>
  );
}

/** What became of the schedule's last time: the run it started, or why nothing ran and what to do about it. */
function LastResult({ schedule }: { schedule: Schedule }) {
  const last = schedule.last_result;
  if (!last) return <p className="text-muted">Not run yet.</p>;
  if (last.outcome === "triggered") {
    return (
      <p className="text-muted">
        Last ran <Timestamp value={last.scheduled_for} />
        {last.version ? ` on ${last.version}` : ""}
        {last.execution_id && (
          <>
            {": "}
            <Link to="/runs/$runId" params={{ runId: last.execution_id }} className="text-accent underline">
              see the run
            </Link>
          </>
        )}
      </p>
    );
  }
  return (
    <div className="rounded-md bg-amber-50 p-2 text-amber-900 dark:bg-amber-950 dark:text-amber-100">
      <p>
        Skipped <Timestamp value={last.scheduled_for} />: {last.detail}
      </p>
      {last.fix && <p className="mt-1 text-amber-800 dark:text-amber-200">{last.fix}</p>}
    </div>
  );
}

/** Delete, after a question (components/confirm-button.tsx: the dialog opens on "Keep", which changes nothing). */
function DeleteScheduleButton({
  cron,
  disabled,
  onConfirm,
}: {
  cron: string;
  disabled: boolean;
  onConfirm: () => void;
}) {
  return (
    <ConfirmButton
      label="Delete"
      disabled={disabled}
      question="Delete this schedule?"
      detail={
        <>
          The plan no longer runs at <code className="font-mono">{cron}</code>. Runs it already started are
          kept.
        </>
      }
      keepLabel="Keep"
      confirmLabel="Delete schedule"
      onConfirm={onConfirm}
    />
  );
}
