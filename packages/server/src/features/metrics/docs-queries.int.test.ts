/**
 * The PromQL that docs/grafana-dashboard.json and docs/operating.md's alerts hand operators: every expression
 * parses (`promtool check rules`, from Debian's `prometheus`), uses only the names the server exposes (API.md
 * §15, metric-names.ts) or Node's standard ones, and the dashboard shows every one of §15's names.
 */
import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { metricNames } from "./metric-names.ts";
import { promtoolRuleComplaints } from "./prometheus.fixture.ts";

const docs = new URL("../../../../../docs/", import.meta.url);

interface Panel {
  title: string;
  targets?: Array<{ expr: string }>;
}

async function dashboardQueries(): Promise<Array<{ title: string; expr: string }>> {
  const dashboard = JSON.parse(await readFile(new URL("grafana-dashboard.json", docs), "utf8")) as {
    panels: Panel[];
  };
  return dashboard.panels.flatMap((panel) =>
    (panel.targets ?? []).map(({ expr }) => ({ title: panel.title, expr })),
  );
}

/** Grafana's variables as a Prometheus rule would have them. */
const asPromql = (expr: string) =>
  expr.replaceAll("$__rate_interval", "5m").replaceAll('"$job"', '"testbay"');

const usedNames = (expr: string) =>
  [...expr.matchAll(/\b((?:testbay|process|nodejs)_[a-z0-9_]+)/g)].map((match) => match[1] as string);

const known = new Set<string>(Object.values(metricNames));
const knownSeries = (name: string) =>
  known.has(name) || known.has(name.replace(/_(bucket|sum|count)$/, "")) || /^(process|nodejs)_/.test(name);

describe("the dashboard and the alerts in docs/", () => {
  it("docs/grafana-dashboard.json: every query parses and uses only exposed names, and every §15 name is shown", async () => {
    const queries = await dashboardQueries();
    expect(queries.length).toBeGreaterThan(10);
    const rules = [
      "groups:",
      "  - name: dashboard",
      "    rules:",
      ...queries.map(
        ({ expr }, i) =>
          `      - record: dashboard:query_${i}\n        expr: ${JSON.stringify(asPromql(expr))}`,
      ),
      "",
    ].join("\n");
    expect(await promtoolRuleComplaints(rules)).toBe("");
    const names = queries.flatMap(({ expr }) => usedNames(expr));
    expect(names.filter((name) => !knownSeries(name))).toEqual([]);
    const shown = new Set(names.map((name) => name.replace(/_(bucket|sum|count)$/, "")));
    expect(Object.values(metricNames).filter((name) => !shown.has(name))).toEqual([]);
  });

  it("docs/operating.md: the alert rules given as a start pass promtool and use only exposed names", async () => {
    const guide = await readFile(new URL("operating.md", docs), "utf8");
    const block = [...guide.matchAll(/```yaml\n(groups:[\s\S]*?)```/g)].map((match) => match[1] as string);
    expect(block).toHaveLength(1);
    expect(await promtoolRuleComplaints(block[0] as string)).toBe("");
    expect(usedNames(block[0] as string).filter((name) => !knownSeries(name))).toEqual([]);
  });
});
