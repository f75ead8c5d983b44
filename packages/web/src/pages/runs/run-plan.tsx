import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { planQuery } from "../../api/catalog.ts";
import { ApiProblem } from "../../api/problem.ts";
import type { TestPlan } from "../../api/types.ts";

/**
 * The test plan a run ran, by name, linking to the plan. Runs name their plan by ID only (GET /v1/executions): the
 * names come from the plans list the filters read anyway (`listed`: active and archived plans, the first 100), and
 * only a plan not in it (deleted, or past the first 100) is read on its own, once the list has answered
 * (`lookUp`), with GET /v1/testplans/{id}, whose cache the run's header shares. So a page of 25 runs stays within
 * a person's rate limit (20 calls at once by default). An archived or deleted plan keeps its name and says its
 * state; a plan the server no longer has (purged 30 days after deletion) shows as its ID.
 */
export function RunPlan(props: { planId: string; listed: TestPlan | undefined; lookUp: boolean }) {
  const { planId } = props;
  const read = useQuery({ ...planQuery(planId), enabled: props.listed === undefined && props.lookUp });
  const plan = props.listed ?? read.data;
  if (plan) {
    return (
      <span className="break-words">
        <Link to="/plans/$planId" params={{ planId }} title={planId} className="text-accent hover:underline">
          {plan.name}
        </Link>
        {plan.state !== "active" && <span className="text-muted"> ({plan.state})</span>}
      </span>
    );
  }
  const gone = read.error instanceof ApiProblem && read.error.status === 404;
  return (
    <span className="text-xs break-all text-muted" title={gone ? "This plan no longer exists" : undefined}>
      {gone ? `removed plan ${planId}` : planId}
    </span>
  );
}
