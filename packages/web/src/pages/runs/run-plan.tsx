import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { planQuery } from "../../api/catalog.ts";
import { ApiProblem } from "../../api/problem.ts";

/**
 * The test plan a run ran, by name, linking to the plan. Runs name their plan by ID only (GET /v1/executions): each
 * plan is read once (GET /v1/testplans/{id}, any state, cached as the run's header reads it in run-header.tsx), so
 * a page of 25 runs asks once per plan it shows. An archived or deleted plan keeps its name and says its state; a
 * plan the server no longer has (purged 30 days after deletion) shows as its ID.
 */
export function RunPlan({ planId }: { planId: string }) {
  const plan = useQuery(planQuery(planId));
  if (plan.data) {
    return (
      <span className="break-words">
        <Link to="/plans/$planId" params={{ planId }} title={planId} className="text-accent hover:underline">
          {plan.data.name}
        </Link>
        {plan.data.state !== "active" && <span className="text-muted"> ({plan.data.state})</span>}
      </span>
    );
  }
  const gone = plan.error instanceof ApiProblem && plan.error.status === 404;
  return (
    <span className="text-xs break-all text-muted" title={gone ? "This plan no longer exists" : undefined}>
      {gone ? `removed plan ${planId}` : planId}
    </span>
  );
}
