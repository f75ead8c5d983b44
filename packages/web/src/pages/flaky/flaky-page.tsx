import { useQuery } from "@tanstack/react-query";
import { Link, useNavigate } from "@tanstack/react-router";
import { plansQuery } from "../../api/catalog.ts";
import { flakyRoute } from "../../app/router.tsx";
import { LabelledSelect } from "../../components/labelled-select.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { QuarantineControl } from "../run/quarantine-control.tsx";
import { QuarantinedBadge } from "../run/quarantined-badge.tsx";
import { flakyTestsQuery } from "./flaky-tests-query.ts";

const percent = new Intl.NumberFormat(undefined, { style: "percent", maximumFractionDigits: 0 });

/**
 * A plan's flaky tests (GET /v1/tests over its last runs): how often each was flaky, its last run, and (for members
 * and admins) the quarantine button the run page has, so that a known-flaky test stops failing runs while it is
 * fixed.
 */
export function FlakyPage() {
  const search = flakyRoute.useSearch();
  const navigate = useNavigate({ from: "/flaky" });
  const plans = useQuery(plansQuery(undefined));
  const planId = search.plan ?? plans.data?.[0]?.id;
  const tests = useQuery({ ...flakyTestsQuery(planId ?? ""), enabled: planId !== undefined });

  return (
    <div className="space-y-4">
      <h1 className="text-xl font-semibold">Flaky tests</h1>
      <LabelledSelect
        label="Test plan"
        value={planId ?? ""}
        onChange={(plan) => navigate({ search: { plan: plan || undefined } })}
      >
        {plans.data?.map((plan) => (
          <option key={plan.id} value={plan.id}>
            {plan.name}
          </option>
        ))}
      </LabelledSelect>
      {plans.error && <ProblemMessage error={plans.error} />}
      {plans.data?.length === 0 && <p className="text-muted">No test plans yet.</p>}
      {tests.error && <ProblemMessage error={tests.error} />}
      {tests.data?.length === 0 && (
        <p className="text-muted">No test of this plan was flaky in its recent runs.</p>
      )}
      {planId && tests.data && tests.data.length > 0 && (
        <ul className="divide-y divide-line rounded-lg border border-line bg-surface">
          {tests.data.map((test) => (
            <li
              key={test.id}
              aria-label={test.name}
              className="flex flex-wrap items-center gap-x-4 gap-y-2 p-3"
            >
              <div className="min-w-0 flex-1 basis-64">
                <p className="font-medium break-all">
                  {test.name} {test.quarantined && <QuarantinedBadge />}
                </p>
                <p className="text-xs text-muted break-all">{test.classname}</p>
              </div>
              <div className="text-sm">
                <span className="font-semibold">{percent.format(test.flaky_rate)}</span>{" "}
                <span className="text-muted">
                  flaky ({test.flaky_runs} of {test.runs} runs)
                </span>
              </div>
              <div className="text-sm text-muted">
                Last run:{" "}
                {test.last_execution_id ? (
                  <Link
                    to="/runs/$runId"
                    params={{ runId: test.last_execution_id }}
                    className="text-accent underline"
                  >
                    <Timestamp value={test.last_run_at} />
                  </Link>
                ) : (
                  "—"
                )}
              </div>
              <QuarantineControl test={test} planId={planId} />
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
