import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useMemo } from "react";
import { appQuery, appRunsQuery, appVersionsQuery } from "../../api/apps.ts";
import { plansQuery } from "../../api/catalog.ts";
import { appRoute } from "../../app/router.tsx";
import { Fact } from "../../components/fact.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { AppNotFound } from "./app-not-found.tsx";
import { DottedName } from "./dotted-name.tsx";
import { VersionCard } from "./version-card.tsx";

const buttonLink = "rounded-md border border-line px-3 py-1.5 text-sm hover:bg-sunken";

/** One app: its versions newest first, each with what the server read from it, its test package and its runs. */
export function AppPage() {
  const { packageName } = appRoute.useParams();
  const { cursor } = appRoute.useSearch();
  const app = useQuery(appQuery(packageName));
  const versions = useQuery(appVersionsQuery(packageName, cursor));
  const runs = useQuery(appRunsQuery(packageName));
  const plans = useQuery(plansQuery(packageName));
  const planNames = useMemo(
    () => new Map((plans.data ?? []).map((plan) => [plan.id, plan.name] as const)),
    [plans.data],
  );

  if (app.error) return <AppNotFound packageName={packageName} error={app.error} />;
  if (!app.data) return <p className="text-muted">Loading the app…</p>;
  const data = app.data;
  const appRuns = { items: runs.data?.items, more: Boolean(runs.data?.next_cursor) };

  return (
    <div className="space-y-6">
      <header className="space-y-4">
        <div className="flex flex-wrap items-center gap-3">
          <h1 className="text-xl font-semibold">
            {data.display_name ?? <DottedName name={data.package_name} />}
          </h1>
          <div className="ml-auto flex flex-wrap gap-2">
            <Link to="/runs" search={{ app: data.package_name }} className={buttonLink}>
              Runs of this app
            </Link>
            <Link to="/plans" search={{ app: data.package_name }} className={buttonLink}>
              Test plans
            </Link>
          </div>
        </div>
        <dl className="grid grid-cols-2 gap-x-6 gap-y-3 rounded-lg border border-line bg-surface p-4 text-sm sm:grid-cols-4">
          <Fact label="Package">
            <DottedName name={data.package_name} />
          </Fact>
          <Fact label="Platform">{data.platform === "ios" ? "iOS" : "Android"}</Fact>
          <Fact label="Versions">{data.version_count}</Fact>
          <Fact label="Registered">
            <Timestamp value={data.created_at} />
          </Fact>
        </dl>
      </header>
      <section aria-labelledby="versions-heading" className="space-y-4">
        <h2 id="versions-heading" className="font-semibold">
          Versions
        </h2>
        {versions.error && <ProblemMessage error={versions.error} />}
        {runs.error && <ProblemMessage error={runs.error} />}
        {versions.isPending && <p className="text-muted">Loading versions…</p>}
        {versions.data && versions.data.items.length === 0 && (
          <p className="text-sm text-muted">
            No versions yet. Upload a build with{" "}
            <code className="text-xs break-all">
              testbay upload --app {data.package_name} --version 1.0.0 --file PATH
            </code>
            .
          </p>
        )}
        {versions.data?.items.map((version, index) => (
          <VersionCard
            key={version.version}
            version={version}
            latest={!cursor && index === 0}
            appRuns={appRuns}
            planNames={planNames}
          />
        ))}
        <nav aria-label="Pages of versions" className="flex gap-3 text-sm">
          {cursor && (
            <Link
              to="/apps/$packageName"
              params={{ packageName }}
              search={{ cursor: undefined }}
              className="text-accent underline"
            >
              ← Newest versions
            </Link>
          )}
          {versions.data?.next_cursor && (
            <Link
              to="/apps/$packageName"
              params={{ packageName }}
              search={{ cursor: versions.data.next_cursor }}
              className="text-accent underline"
            >
              Older versions →
            </Link>
          )}
        </nav>
      </section>
    </div>
  );
}
