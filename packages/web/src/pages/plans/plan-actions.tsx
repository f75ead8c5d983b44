import { useMutation, useQueryClient } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { changePlanState } from "../../api/plans.ts";
import type { TestPlan } from "../../api/types.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";

const button = "rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken disabled:opacity-50";

/** Edit, archive, delete (soft, restorable for 30 days) and restore, as the plan's state allows. */
export function PlanActions({ plan }: { plan: TestPlan }) {
  const queries = useQueryClient();
  const change = useMutation({
    mutationFn: (to: "archive" | "delete" | "restore") => changePlanState(plan.id, to),
    onSuccess: (updated) => {
      queries.setQueryData(["plan", plan.id], updated);
      return queries.invalidateQueries({ queryKey: ["plans"] });
    },
  });
  const busy = change.isPending;

  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-center gap-2">
        {plan.state === "active" && (
          <Link to="/plans/$planId/edit" params={{ planId: plan.id }} className={button}>
            Edit
          </Link>
        )}
        {plan.state === "active" && (
          <button type="button" className={button} disabled={busy} onClick={() => change.mutate("archive")}>
            Archive
          </button>
        )}
        {plan.state !== "deleted" && (
          <button
            type="button"
            className={`${button} text-red-700 dark:text-red-300`}
            disabled={busy}
            onClick={() => change.mutate("delete")}
          >
            Delete
          </button>
        )}
        {plan.state !== "active" && (
          <button type="button" className={button} disabled={busy} onClick={() => change.mutate("restore")}>
            Restore
          </button>
        )}
      </div>
      {plan.state !== "deleted" && (
        <p className="text-xs text-muted">
          Archived plans cannot be triggered until restored. Deleting is soft: a deleted plan can be restored
          for 30 days.
        </p>
      )}
      {change.error && <ProblemMessage error={change.error} />}
    </div>
  );
}
