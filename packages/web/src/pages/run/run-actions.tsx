import { useMutation, useQueryClient } from "@tanstack/react-query";
import { useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { cancelRun, triggerPlan } from "../../api/plans.ts";
import { useMayChange } from "../../api/role.ts";
import type { Execution } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { FailedTriggers } from "../plans/trigger-form.tsx";
import { CancelRunButton } from "./cancel-run-dialog.tsx";

const button = "rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken disabled:opacity-50";

/** What Re-run triggers: the run's plan on its version; undefined for a session, which has no plan (API.md §12). */
function rerunOf(run: Execution) {
  const { test_plan_id: planId, package_name: packageName, version } = run;
  return planId !== null && packageName !== null && version !== null
    ? { planId, packageName, version }
    : undefined;
}

/**
 * Cancel (while the run is queued or running; it asks first, as it cannot be undone) and Re-run (the same plan on the same version, a new run), for
 * members and admins; viewers do not see them. A session can be cancelled, not re-run.
 */
export function RunActions({ run }: { run: Execution }) {
  const mayChange = useMayChange();
  const queries = useQueryClient();
  const navigate = useNavigate();
  const [key, setKey] = useState(() => crypto.randomUUID());

  const cancel = useMutation({
    mutationFn: () => cancelRun(run.id),
    onSuccess: (updated) => queries.setQueryData(["execution", run.id], updated),
  });
  const rerun = useMutation({
    mutationFn: (again: NonNullable<ReturnType<typeof rerunOf>>) =>
      triggerPlan(again.planId, again.packageName, again.version, key),
    onSuccess: async (outcome) => {
      const next = outcome.executions[0];
      if (!next) return;
      setKey(crypto.randomUUID());
      await navigate({ to: "/runs/$runId", params: { runId: next.id } });
    },
  });

  if (!mayChange) return null;
  const going = run.status === "queued" || run.status === "running";
  const again = rerunOf(run);
  return (
    <>
      {going && (
        <CancelRunButton
          what={run.kind}
          disabled={cancel.isPending || run.cancel_requested}
          label={
            run.cancel_requested ? "Cancelling…" : run.kind === "session" ? "Cancel session" : "Cancel run"
          }
          onConfirm={() => cancel.mutate()}
        />
      )}
      {again && (
        <button
          type="button"
          className={button}
          disabled={rerun.isPending}
          onClick={() => rerun.mutate(again)}
        >
          {rerun.isPending ? "Starting…" : "Re-run"}
        </button>
      )}
      {(cancel.error || rerun.error || (rerun.data && rerun.data.failed.length > 0)) && (
        <div className="w-full">
          {cancel.error && <ProblemMessage error={cancel.error} />}
          {rerun.error && <ProblemMessage error={rerun.error} />}
          {rerun.data && rerun.data.failed.length > 0 && <FailedTriggers failed={rerun.data.failed} />}
        </div>
      )}
    </>
  );
}
