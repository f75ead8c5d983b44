import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useId, useMemo, useState } from "react";
import { versionsQuery } from "../../api/plans.ts";
import type { TestPlan } from "../../api/types.ts";
import { formControl } from "../../components/control-classes.ts";
import { LabelledField } from "../../components/labelled-field.tsx";
import { cronInWords } from "./cron-words.ts";
import { FieldMessages } from "./field-messages.tsx";
import { scheduleFieldErrors } from "./schedule-field-errors.ts";
import { createSchedule } from "./schedules-api.ts";

type VersionKind = "latest" | "branch" | "fixed";

/** The tz database's zones the browser knows, UTC first (the API's default). */
function timeZones(): string[] {
  const known = typeof Intl.supportedValuesOf === "function" ? Intl.supportedValuesOf("timeZone") : [];
  return ["UTC", ...known.filter((zone) => zone !== "UTC")];
}

/** The viewer's own zone: the times they think in. */
const ownZone = () => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC";

const button =
  "h-9 rounded-md bg-accent px-4 text-sm font-medium text-accent-ink hover:opacity-90 disabled:opacity-50";

/**
 * Adds a schedule to the plan: a cron expression (read back in words as it is typed), the time zone it is read in,
 * and which version runs (the newest, the newest of a branch, or a fixed one). The server checks all three; what it
 * refuses is said at the field.
 */
export function ScheduleForm({ plan, onDone }: { plan: TestPlan; onDone: () => void }) {
  const queries = useQueryClient();
  const zones = useMemo(timeZones, []);
  const versions = useQuery(versionsQuery(plan.package_name));
  const [cron, setCron] = useState("0 2 * * *");
  const [timezone, setTimezone] = useState(ownZone);
  const [kind, setKind] = useState<VersionKind>("latest");
  const [branch, setBranch] = useState("main");
  const [fixed, setFixed] = useState<string>();
  const id = useId();
  const fixedVersion = fixed ?? versions.data?.[0]?.version ?? "";
  const version = kind === "latest" ? "latest" : kind === "branch" ? `latest:branch=${branch}` : fixedVersion;

  const save = useMutation({
    mutationFn: () => createSchedule(plan.id, { cron, timezone, version }),
    onSuccess: async () => {
      await queries.invalidateQueries({ queryKey: ["schedules", plan.id] });
      onDone();
    },
  });
  const errors = scheduleFieldErrors(save.error);
  const words = cronInWords(cron);

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    save.mutate();
  };

  const describedBy = (field: string, ...more: string[]) =>
    [errors.fields[field as keyof typeof errors.fields] ? `${id}-${field}-error` : "", ...more]
      .filter(Boolean)
      .join(" ") || undefined;

  return (
    <form
      onSubmit={submit}
      aria-label="Add a schedule"
      className="space-y-3 rounded-md border border-line p-3"
    >
      <div className="grid gap-3 sm:grid-cols-2 lg:grid-cols-3">
        <LabelledField id={`${id}-cron`} label="Cron expression">
          <input
            id={`${id}-cron`}
            className={`${formControl} font-mono`}
            value={cron}
            spellCheck={false}
            autoComplete="off"
            aria-invalid={errors.fields.cron ? true : undefined}
            aria-describedby={describedBy("cron", `${id}-cron-help`)}
            onChange={(event) => setCron(event.target.value)}
          />
          <p id={`${id}-cron-help`} className="text-xs text-muted">
            {words ?? "minute hour day-of-month month day-of-week"} ({timezone})
          </p>
          <FieldMessages id={`${id}-cron-error`} messages={errors.fields.cron} />
        </LabelledField>
        <LabelledField id={`${id}-timezone`} label="Time zone">
          <select
            id={`${id}-timezone`}
            className={formControl}
            value={timezone}
            aria-invalid={errors.fields.timezone ? true : undefined}
            aria-describedby={describedBy("timezone")}
            onChange={(event) => setTimezone(event.target.value)}
          >
            {zones.map((zone) => (
              <option key={zone} value={zone}>
                {zone}
              </option>
            ))}
          </select>
          <FieldMessages id={`${id}-timezone-error`} messages={errors.fields.timezone} />
        </LabelledField>
        <LabelledField id={`${id}-version`} label="Version">
          <select
            id={`${id}-version`}
            className={formControl}
            value={kind}
            aria-invalid={errors.fields.version ? true : undefined}
            aria-describedby={describedBy("version")}
            onChange={(event) => setKind(event.target.value as VersionKind)}
          >
            <option value="latest">The newest version</option>
            <option value="branch">The newest version of a branch</option>
            <option value="fixed">A fixed version</option>
          </select>
          {kind === "branch" && (
            <input
              aria-label="Branch"
              className={formControl}
              value={branch}
              aria-invalid={errors.fields.version ? true : undefined}
              onChange={(event) => setBranch(event.target.value)}
            />
          )}
          {kind === "fixed" && (
            <select
              aria-label="Fixed version"
              className={formControl}
              value={fixedVersion}
              disabled={!versions.data?.length}
              onChange={(event) => setFixed(event.target.value)}
            >
              {versions.data?.map((item) => (
                <option key={item.version} value={item.version}>
                  {item.version}
                </option>
              ))}
            </select>
          )}
          <FieldMessages id={`${id}-version-error`} messages={errors.fields.version} />
        </LabelledField>
      </div>
      {errors.general.length > 0 && (
        <div role="alert" className="text-sm text-red-700 dark:text-red-300">
          {errors.general.map((message) => (
            <p key={message}>{message}</p>
          ))}
        </div>
      )}
      <div className="flex flex-wrap gap-2">
        <button type="submit" className={button} disabled={save.isPending}>
          {save.isPending ? "Adding…" : "Add schedule"}
        </button>
        <button
          type="button"
          className="h-9 rounded-md border border-line px-3 text-sm hover:bg-sunken"
          onClick={onDone}
        >
          Cancel
        </button>
      </div>
    </form>
  );
}
