import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { appPageQuery } from "../../api/apps.ts";
import { appsRoute } from "../../app/router.tsx";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { AppsList } from "./apps-list.tsx";
import { NoApps } from "./no-apps.tsx";

/** Every app of the organization, newest first: its versions, the latest one and when, its runs and plans. */
export function AppsPage() {
  const { cursor } = appsRoute.useSearch();
  const apps = useQuery(appPageQuery(cursor));

  return (
    <section className="space-y-4">
      <h1 className="text-xl font-semibold">Apps</h1>
      {apps.error && <ProblemMessage error={apps.error} />}
      {apps.isPending && <p className="text-muted">Loading apps…</p>}
      {apps.data && apps.data.items.length === 0 && !cursor && <NoApps />}
      {apps.data && apps.data.items.length > 0 && <AppsList apps={apps.data.items} />}
      <nav aria-label="Pages of apps" className="flex gap-3 text-sm">
        {cursor && (
          <Link to="/apps" search={{ cursor: undefined }} className="text-accent underline">
            ← Newest
          </Link>
        )}
        {apps.data?.next_cursor && (
          <Link to="/apps" search={{ cursor: apps.data.next_cursor }} className="text-accent underline">
            Older apps →
          </Link>
        )}
      </nav>
    </section>
  );
}
