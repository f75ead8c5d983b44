import { useQuery } from "@tanstack/react-query";
import { planQuery } from "../../api/catalog.ts";
import { useMayChange } from "../../api/role.ts";
import { editPlanRoute, newPlanRoute } from "../../app/router.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { PlanForm } from "./plan-form.tsx";

const viewerNote = (
  <p className="text-muted">Viewers read plans; a member or an admin creates and edits them.</p>
);

/** /plans/new: a new plan, for the app the list was showing if any. */
export function NewPlanPage() {
  const { app } = newPlanRoute.useSearch();
  const mayChange = useMayChange();
  return (
    <section className="space-y-4">
      <h1 className="text-xl font-semibold">New test plan</h1>
      {mayChange ? <PlanForm app={app} /> : viewerNote}
    </section>
  );
}

/** /plans/$planId/edit: the plan's form, filled in. */
export function EditPlanPage() {
  const { planId } = editPlanRoute.useParams();
  const plan = useQuery(planQuery(planId));
  const mayChange = useMayChange();
  if (plan.error) return <ProblemMessage error={plan.error} />;
  if (!plan.data) return <p className="text-muted">Loading the test plan…</p>;
  return (
    <section className="space-y-4">
      <h1 className="text-xl font-semibold break-all">Edit {plan.data.name}</h1>
      {mayChange ? <PlanForm plan={plan.data} /> : viewerNote}
    </section>
  );
}
