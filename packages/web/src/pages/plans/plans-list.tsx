import { Link } from "@tanstack/react-router";
import type { TestPlan } from "../../api/types.ts";
import { ColumnHeader } from "../../components/column-header.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { WideTable } from "../../components/wide-table.tsx";
import { devicesSummary, stepsSummary } from "./plan-summary.ts";

/**
 * The plans with what they run and where: a table from 640 px wide, a list of cards on a phone (a five-column
 * table squeezed to 390 px breaks package names letter by letter).
 */
export function PlansList({ plans, deleted }: { plans: TestPlan[]; deleted: boolean }) {
  const when = (plan: TestPlan) => <Timestamp value={deleted ? plan.restorable_until : plan.updated_at} />;
  const name = (plan: TestPlan) => (
    <Link
      to="/plans/$planId"
      params={{ planId: plan.id }}
      className="font-medium text-accent hover:underline"
    >
      {plan.name}
    </Link>
  );
  return (
    <>
      <ul className="space-y-2 sm:hidden">
        {plans.map((plan) => (
          <li key={plan.id} className="space-y-1 rounded-lg border border-line bg-surface p-3 text-sm">
            <div>{name(plan)}</div>
            <div className="break-all text-muted">{plan.package_name}</div>
            <div>{stepsSummary(plan.steps)}</div>
            <div className="text-muted">
              {devicesSummary(plan.devices)} · {deleted ? "restorable until " : "changed "}
              {when(plan)}
            </div>
          </li>
        ))}
      </ul>
      <WideTable
        head={
          <>
            <ColumnHeader>Plan</ColumnHeader>
            <ColumnHeader>App</ColumnHeader>
            <ColumnHeader>Steps</ColumnHeader>
            <ColumnHeader>Devices</ColumnHeader>
            <ColumnHeader>{deleted ? "Restorable until" : "Changed"}</ColumnHeader>
          </>
        }
      >
        {plans.map((plan) => (
          <tr key={plan.id} className="border-b border-line last:border-0 hover:bg-sunken">
            <td className="px-3 py-2">{name(plan)}</td>
            <td className="px-3 py-2">{plan.package_name}</td>
            <td className="px-3 py-2">{stepsSummary(plan.steps)}</td>
            <td className="px-3 py-2">{devicesSummary(plan.devices)}</td>
            <td className="px-3 py-2 whitespace-nowrap">{when(plan)}</td>
          </tr>
        ))}
      </WideTable>
    </>
  );
}
