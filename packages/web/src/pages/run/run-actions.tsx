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

/**
 * Cancel (while the run is queued or running; it asks first, as it cannot be undone) and Re-run (the same plan on the same version, a new run), for
 * members and admins; viewers do not see them.
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
    mutationFn: () => triggerPlan(run.test_plan_id, run.package_name, run.version, key),
    onSuccess: async (outcome) => {
      const next = outcome.executions[0];
      if (!next) return;
      setKey(crypto.randomUUID());
      await navigate({ to: "/runs/$runId", params: { runId: next.id } });
    },
  });

  if (!mayChange) return null;
  const going = run.status === "queued" || run.status === "running";
  return (
    <>
      {going && (
        <CancelRunButton
          disabled={cancel.isPending || run.cancel_requested}
          label={run.cancel_requested ? "Cancelling…" : "Cancel run"}
          onConfirm={() => cancel.mutate()}
        />
      )}
      <button type="button" className={button} disabled={rerun.isPending} onClick={() => rerun.mutate()}>
        {rerun.isPending ? "Starting…" : "Re-run"}
      </button>
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
