import { keepPreviousData, queryOptions } from "@tanstack/react-query";
import type { components } from "../../../client/src/sdk/api.generated.ts";
import { api } from "./client.ts";
import { unwrap } from "./problem.ts";
import { finalStatuses } from "./types.ts";

// Apps and their versions (API.md §4, §4b): the apps list, an app's versions with what the server read from their
// binaries and test packages, and the runs of each version.

export type AppVersion = components["schemas"]["AppVersion"];
export type BinaryMetadata = components["schemas"]["BinaryMetadata"];
export type TestPackage = NonNullable<AppVersion["test_package"]>;

/** A page of the organization's apps, each with its number of versions and its latest one. */
export const appPageQuery = (cursor: string | undefined) =>
  queryOptions({
    queryKey: ["apps", "page", cursor ?? null],
    queryFn: async () => unwrap(await api.GET("/v1/apps", { params: { query: { limit: 50, cursor } } })),
    placeholderData: keepPreviousData,
  });

export const appQuery = (packageName: string) =>
  queryOptions({
    queryKey: ["app", packageName],
    queryFn: async () =>
      unwrap(await api.GET("/v1/apps/{package_name}", { params: { path: { package_name: packageName } } })),
  });

/** Versions per page of an app: each shows its runs, and a page's run lookups stay under the rate limit. */
export const versionsPerPage = 10;

export const appVersionsQuery = (packageName: string, cursor: string | undefined) =>
  queryOptions({
    queryKey: ["app", packageName, "versions", cursor ?? null],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/apps/{package_name}/versions", {
          params: { path: { package_name: packageName }, query: { limit: versionsPerPage, cursor } },
        }),
      ),
    // Paging keeps the page shown until the next one is there; another app's versions are never shown meanwhile.
    placeholderData: (previous, previousQuery) =>
      previousQuery?.queryKey[1] === packageName ? previous : undefined,
  });

/** Runs shown under each version. */
export const runsPerVersion = 5;

/**
 * The app's newest runs, whatever their version: one call gives most versions' recent runs. Its key starts with
 * "executions", so live updates (api/live-updates.ts) read it again when a run changes: one call per change for
 * the whole page, not one per version.
 */
export const appRunsQuery = (packageName: string) =>
  queryOptions({
    queryKey: ["executions", "of-app", packageName],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/executions", { params: { query: { limit: 100, package_name: packageName } } }),
      ),
  });

/**
 * One version's newest runs: asked only for a version the app's newest runs do not cover (an older version of an
 * app with more than a hundred runs). Not live: what changes now is among the app's newest runs; a run still going
 * is read again after a while.
 */
export const versionRunsQuery = (packageName: string, version: string, enabled: boolean) =>
  queryOptions({
    queryKey: ["version-runs", packageName, version],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/executions", {
          params: { query: { limit: runsPerVersion, package_name: packageName, version } },
        }),
      ),
    enabled,
    staleTime: 60_000,
    refetchInterval: (query) =>
      query.state.data?.items.some((run) => !finalStatuses.has(run.status)) ? 10_000 : false,
  });

const path = (segment: string) => encodeURIComponent(segment);

/** Where the browser downloads a version's binary (the session cookie authenticates a plain link). */
export const binaryUrl = (packageName: string, version: string) =>
  `/v1/apps/${path(packageName)}/versions/${path(version)}/binary`;

/** Where the browser downloads a version's test package. */
export const testPackageUrl = (packageName: string, version: string) =>
  `/v1/apps/${path(packageName)}/versions/${path(version)}/test-package/binary`;
