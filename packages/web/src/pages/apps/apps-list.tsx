import { Link } from "@tanstack/react-router";
import type { App } from "../../api/types.ts";
import { ActionsColumnHeader, ColumnHeader } from "../../components/column-header.tsx";
import { Timestamp } from "../../components/timestamp.tsx";
import { WideTable } from "../../components/wide-table.tsx";
import { DottedName } from "./dotted-name.tsx";

const platforms = { android: "Android", ios: "iOS" } as const;

/**
 * The apps with their versions and where their runs and plans are: a table from 640 px wide, a list of cards on
 * a phone (as the plans list does).
 */
export function AppsList({ apps }: { apps: App[] }) {
  const name = (app: App) => (
    <Link
      to="/apps/$packageName"
      params={{ packageName: app.package_name }}
      className="font-medium text-accent hover:underline"
    >
      {app.display_name ?? <DottedName name={app.package_name} />}
    </Link>
  );
  const latest = (app: App) =>
    app.latest_version ? (
      <>
        <span className="break-all">{app.latest_version.version}</span>{" "}
        <span className="text-muted">
          <Timestamp value={app.latest_version.created_at} />
        </span>
      </>
    ) : (
      <span className="text-muted">none yet</span>
    );
  const links = (app: App) => (
    <span className="flex gap-3">
      <Link
        to="/runs"
        search={{ app: app.package_name }}
        className="text-accent hover:underline"
        aria-label={`Runs of ${app.package_name}`}
      >
        Runs
      </Link>
      <Link
        to="/plans"
        search={{ app: app.package_name }}
        className="text-accent hover:underline"
        aria-label={`Test plans of ${app.package_name}`}
      >
        Plans
      </Link>
    </span>
  );
  const versions = (app: App) => `${app.version_count} ${app.version_count === 1 ? "version" : "versions"}`;
  return (
    <>
      <ul className="space-y-2 sm:hidden">
        {apps.map((app) => (
          <li
            key={app.package_name}
            className="space-y-1 rounded-lg border border-line bg-surface p-3 text-sm"
          >
            <div>{name(app)}</div>
            {app.display_name && (
              <div className="text-muted">
                <DottedName name={app.package_name} />
              </div>
            )}
            <div className="text-muted">
              {platforms[app.platform]} · {versions(app)}
            </div>
            <div>Latest: {latest(app)}</div>
            {links(app)}
          </li>
        ))}
      </ul>
      <WideTable
        head={
          <>
            <ColumnHeader>App</ColumnHeader>
            <ColumnHeader>Platform</ColumnHeader>
            <ColumnHeader>Versions</ColumnHeader>
            <ColumnHeader>Latest version</ColumnHeader>
            <ActionsColumnHeader label="Runs and test plans" />
          </>
        }
      >
        {apps.map((app) => (
          <tr key={app.package_name} className="border-b border-line last:border-0 hover:bg-sunken">
            <td className="px-3 py-2">
              {name(app)}
              {app.display_name && (
                <div className="text-xs text-muted">
                  <DottedName name={app.package_name} />
                </div>
              )}
            </td>
            <td className="px-3 py-2">{platforms[app.platform]}</td>
            <td className="px-3 py-2 tabular-nums">{app.version_count}</td>
            <td className="px-3 py-2">{latest(app)}</td>
            <td className="px-3 py-2">{links(app)}</td>
          </tr>
        ))}
      </WideTable>
    </>
  );
}
