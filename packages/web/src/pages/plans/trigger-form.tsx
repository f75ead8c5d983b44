import { useMutation, useQuery } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { type FormEvent, useId, useState } from "react";
import { type FailedExecution, triggerPlan, versionsQuery } from "../../api/plans.ts";
import type { TestPlan } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { defaultVersion, neededTestPackage, testPackageNames, unfitReason } from "./test-package-need.ts";

/** Why a plan did not start, and what to do about it, as the API said. */
export function FailedTriggers({ failed }: { failed: FailedExecution[] }) {
  return (
    <div
      role="alert"
      className="space-y-2 rounded-md border border-red-300 bg-red-50 p-3 text-sm text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
    >
      {failed.map((failure) => (
        <div key={failure.test_plan_id}>
          <p>{failure.detail}</p>
          <p className="mt-1 text-red-800 dark:text-red-200">{failure.fix}</p>
        </div>
      ))}
    </div>
  );
}

/**
 * Triggers the plan on a version of its app, then opens the new run. One idempotency key per trigger: a retry
 * after a lost answer replays the first one instead of starting a second run. A plan whose steps run a test
 * package starts on the newest version that has one; versions without it cannot be chosen (the server would
 * refuse them) and say why.
 */
export function TriggerForm({ plan }: { plan: TestPlan }) {
  const navigate = useNavigate();
  const versions = useQuery(versionsQuery(plan.package_name));
  const [chosen, setChosen] = useState<string>();
  const [key, setKey] = useState(() => crypto.randomUUID());
  const versionId = useId();
  const need = neededTestPackage(plan);
  const version = chosen ?? defaultVersion(versions.data ?? [], need)?.version;
  const fitting = versions.data?.filter((item) => unfitReason(item, need) === undefined) ?? [];
  const noneFits =
    need !== undefined && versions.data !== undefined && versions.data.length > 0 && fitting.length === 0;
  /** Versions newer than the first that fits, passed over: said under the picker, whose closed state hides them. */
  const newest = fitting[0];
  const passedOver = newest ? (versions.data ?? []).slice(0, versions.data?.indexOf(newest)) : [];
  const noteId = `${versionId}-note`;

  const trigger = useMutation({
    mutationFn: (on: string) => triggerPlan(plan.id, plan.package_name, on, key),
    onSuccess: async (outcome) => {
      const run = outcome.executions[0];
      if (!run) return;
      setKey(crypto.randomUUID());
      await navigate({ to: "/runs/$runId", params: { runId: run.id } });
    },
  });

  const submit = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    if (version) trigger.mutate(version);
  };

  return (
    <form onSubmit={submit} aria-label="Trigger the plan" className="space-y-3">
      <div className="flex flex-wrap items-end gap-3">
        <div className="flex flex-col gap-1">
          <label htmlFor={versionId} className="text-xs text-muted">
            Version of {plan.package_name}
          </label>
          <select
            id={versionId}
            className="h-9 min-w-40 rounded-md border border-line bg-surface px-2 text-sm"
            value={version ?? ""}
            disabled={!versions.data?.length}
            aria-describedby={noneFits || passedOver.length > 0 ? noteId : undefined}
            onChange={(event) => {
              setChosen(event.target.value);
              setKey(crypto.randomUUID());
            }}
          >
            {versions.data?.map((item) => {
              const unfit = unfitReason(item, need);
              return (
                <option key={item.version} value={item.version} disabled={unfit !== undefined}>
                  {item.version}
                  {unfit ? ` (${unfit})` : item.test_package ? " (with test package)" : ""}
                </option>
              );
            })}
          </select>
        </div>
        <button
          type="submit"
          disabled={!version || noneFits || trigger.isPending}
          className="h-9 rounded-md bg-accent px-4 text-sm font-medium text-accent-ink hover:opacity-90 disabled:opacity-50"
        >
          {trigger.isPending ? "Triggering…" : "Trigger"}
        </button>
      </div>
      {versions.data?.length === 0 && (
        <p className="text-sm text-muted">
          No version of {plan.package_name} is uploaded yet: upload one (testbay upload) to run this plan.
        </p>
      )}
      {noneFits && need && (
        <p id={noteId} className="text-sm text-muted">
          This plan runs {testPackageNames[need]}, and no version of {plan.package_name} has one: upload it
          with the version (testbay upload --test-file PATH) to run this plan.
        </p>
      )}
      {need && passedOver.length > 0 && (
        <p id={noteId} className="text-xs text-muted">
          This plan runs {testPackageNames[need]}: {namesOf(passedOver)}{" "}
          {passedOver.length === 1 ? "has" : "have"} none, so it starts on {newest?.version}.
        </p>
      )}
      {versions.error && <ProblemMessage error={versions.error} />}
      {trigger.error && <ProblemMessage error={trigger.error} />}
      {trigger.data && trigger.data.failed.length > 0 && <FailedTriggers failed={trigger.data.failed} />}
    </form>
  );
}

/** Up to three versions by name, then how many more. */
function namesOf(versions: readonly { version: string }[]): string {
  const named = versions.slice(0, 3).map((item) => item.version);
  return versions.length > 3 ? `${named.join(", ")} and ${versions.length - 3} more` : named.join(", ");
}
