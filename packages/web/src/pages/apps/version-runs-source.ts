import type { Execution } from "../../api/types.ts";

/** The app's newest runs, all versions (appRunsQuery), as a version's run list reads them. */
export interface AppRuns {
  /** Undefined while they load. */
  items: Execution[] | undefined;
  /** Whether the app has older runs than these. */
  more: boolean;
}

/**
 * A version's runs among the app's newest, and whether they are all its newest `wanted`: they are unless the app
 * has older runs and fewer than `wanted` of this version are among the newest (an older version of a busy app),
 * in which case the version's own lookup fills in. Undefined while the app's runs load.
 */
export function runsFromApp(
  appRuns: AppRuns,
  version: string,
  wanted: number,
): { runs: Execution[]; complete: boolean } | undefined {
  if (appRuns.items === undefined) return undefined;
  const runs = appRuns.items.filter((run) => run.version === version);
  return { runs, complete: !appRuns.more || runs.length >= wanted };
}

/**
 * The version's runs from the app's newest (current, read again live) and from its own lookup (older), newest
 * first, each once, the app's copy kept.
 */
export function mergeRuns(fromApp: Execution[], own: Execution[]): Execution[] {
  const seen = new Set(fromApp.map((run) => run.id));
  return [...fromApp, ...own.filter((run) => !seen.has(run.id))].sort((a, b) =>
    a.created_at < b.created_at ? 1 : a.created_at > b.created_at ? -1 : 0,
  );
}
