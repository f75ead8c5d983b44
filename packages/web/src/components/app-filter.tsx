import type { App } from "../api/types.ts";
import { LabelledSelect } from "./labelled-select.tsx";

/** A filter bar's app select (the runs' and the test plans'): "All apps" (value "") or one app by package name. */
export function AppFilter({
  apps,
  value,
  onChange,
}: {
  /** The organization's apps; undefined while they load (only "All apps" then). */
  apps: readonly App[] | undefined;
  value: string;
  onChange: (packageName: string) => void;
}) {
  return (
    <LabelledSelect label="App" value={value} onChange={onChange}>
      <option value="">All apps</option>
      {apps?.map((app) => (
        <option key={app.package_name} value={app.package_name}>
          {app.display_name ? `${app.display_name} (${app.package_name})` : app.package_name}
        </option>
      ))}
    </LabelledSelect>
  );
}
