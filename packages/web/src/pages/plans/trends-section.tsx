import { useQuery } from "@tanstack/react-query";
import { useId, useMemo } from "react";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { formatDuration } from "../../format/duration.ts";
import { TrendChart, type TrendSeries } from "./trend-chart.tsx";
import { type TrendDay, trendsQuery } from "./trends-api.ts";

const percent = (value: number) => `${Math.round(value * 100)}%`;
const count = (value: number) => String(Math.round(value));
const duration = (ms: number) => formatDuration(ms);

interface Charts {
  days: number[];
  passRate: TrendSeries[];
  durations: TrendSeries[];
  flaky: TrendSeries[];
  groups: TrendSeries[];
}

function chartsOf(data: readonly TrendDay[]): Charts {
  return {
    days: data.map((day) => Date.parse(`${day.date}T00:00:00Z`) / 1000),
    passRate: [{ label: "Pass rate", values: data.map((day) => day.pass_rate), color: "#10b981" }],
    durations: [
      { label: "p50", values: data.map((day) => day.p50_ms), color: "#0ea5e9" },
      { label: "p95", values: data.map((day) => day.p95_ms), color: "#f59e0b" },
    ],
    flaky: [{ label: "Flaky tests", values: data.map((day) => day.flaky_tests), color: "#f59e0b" }],
    groups: [
      { label: "New failure groups", values: data.map((day) => day.new_failure_groups), color: "#ef4444" },
    ],
  };
}

/**
 * The plan's last 30 days as charts (API.md §16 "Trends"): pass rate, p50 and p95 run duration, flaky tests and
 * new failure groups per day; the same numbers as a table for screen readers and for copying.
 */
export function TrendsSection({ planId }: { planId: string }) {
  const trends = useQuery(trendsQuery(planId));
  const headingId = useId();
  const charts = useMemo(() => (trends.data ? chartsOf(trends.data) : undefined), [trends.data]);
  return (
    <section aria-labelledby={headingId} className="space-y-3 rounded-lg border border-line bg-surface p-4">
      <h2 id={headingId} className="font-semibold">
        Trends (30 days)
      </h2>
      {trends.error && <ProblemMessage error={trends.error} />}
      {trends.data?.length === 0 && (
        <p className="text-sm text-muted">No finished runs in the last 30 days.</p>
      )}
      {charts && trends.data && trends.data.length > 0 && (
        <>
          <div className="grid gap-4 md:grid-cols-2">
            <TrendChart
              title="Pass rate"
              days={charts.days}
              series={charts.passRate}
              format={percent}
              top={1}
            />
            <TrendChart
              title="Duration (p50, p95)"
              days={charts.days}
              series={charts.durations}
              format={duration}
            />
            <TrendChart title="Flaky tests" days={charts.days} series={charts.flaky} format={count} whole />
            <TrendChart
              title="New failure groups"
              days={charts.days}
              series={charts.groups}
              format={count}
              whole
            />
          </div>
          <details className="text-sm">
            <summary className="cursor-pointer text-muted">Trends as a table</summary>
            <div className="mt-2 overflow-x-auto">
              <table className="w-full text-left">
                <thead className="text-xs text-muted">
                  <tr>
                    {["Day", "Runs", "Pass rate", "p50", "p95", "Flaky tests", "New failure groups"].map(
                      (name) => (
                        <th key={name} className="py-1 pr-3 font-normal">
                          {name}
                        </th>
                      ),
                    )}
                  </tr>
                </thead>
                <tbody className="divide-y divide-line">
                  {trends.data.map((day) => (
                    <tr key={day.date}>
                      <td className="py-1 pr-3 whitespace-nowrap">{day.date}</td>
                      <td className="py-1 pr-3">{day.executions}</td>
                      <td className="py-1 pr-3">{percent(day.pass_rate)}</td>
                      <td className="py-1 pr-3">{day.p50_ms === null ? "—" : duration(day.p50_ms)}</td>
                      <td className="py-1 pr-3">{day.p95_ms === null ? "—" : duration(day.p95_ms)}</td>
                      <td className="py-1 pr-3">{day.flaky_tests}</td>
                      <td className="py-1 pr-3">{day.new_failure_groups}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          </details>
        </>
      )}
    </section>
  );
}
