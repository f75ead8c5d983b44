import {
  createRootRoute,
  createRoute,
  createRouter,
  lazyRouteComponent,
  Outlet,
  redirect,
} from "@tanstack/react-router";
import type { RunFilters } from "../api/executions.ts";
import type { TestPlanState } from "../api/plans.ts";
import { queryClient } from "../api/query-client.ts";
import { sessionQuery } from "../api/session.ts";
import type { ExecutionStatus } from "../api/types.ts";

// The route tree, in code. Every page is its own chunk (lazyRouteComponent), so the first load carries only this
// tree, the API client and React; a page's code comes when it is opened.

const rootRoute = createRootRoute({ component: Outlet });

const text = (value: unknown) => (typeof value === "string" && value !== "" ? value : undefined);

export const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "sign-in",
  validateSearch: (search: Record<string, unknown>): { redirect?: string } => ({
    redirect: text(search.redirect),
  }),
  component: lazyRouteComponent(() => import("../pages/sign-in-page.tsx"), "SignInPage"),
});

/** Every page but sign-in: signed in first, else to the sign-in page, which brings the person back here. */
const signedInRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: "signed-in",
  beforeLoad: async ({ location }) => {
    const session = await queryClient.ensureQueryData(sessionQuery);
    if (!session.signed_in) throw redirect({ to: "/sign-in", search: { redirect: location.href } });
    return { person: session.user };
  },
  component: lazyRouteComponent(() => import("../pages/layout/app-layout.tsx"), "AppLayout"),
});

const indexRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "/",
  beforeLoad: () => {
    throw redirect({ to: "/runs" });
  },
});

const statuses: ReadonlySet<string> = new Set([
  "queued",
  "running",
  "passed",
  "failed",
  "errored",
  "cancelled",
]);

export const runsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "runs",
  validateSearch: (search: Record<string, unknown>): RunFilters => ({
    app: text(search.app),
    version: text(search.version),
    plan: text(search.plan),
    status: statuses.has(String(search.status)) ? (search.status as ExecutionStatus) : undefined,
    branch: text(search.branch),
    commit: text(search.commit),
    cursor: text(search.cursor),
  }),
  component: lazyRouteComponent(() => import("../pages/runs/runs-page.tsx"), "RunsPage"),
});

export const runRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "runs/$runId",
  component: lazyRouteComponent(() => import("../pages/run/run-page.tsx"), "RunPage"),
});

/** Links the CLI printed before the dashboard had its pages (testbay run --wait, GitHub step summaries). */
const oldRunLinkRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "executions/$runId",
  beforeLoad: ({ params }) => {
    throw redirect({ to: "/runs/$runId", params: { runId: params.runId }, replace: true });
  },
});

const agentsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "agents",
  component: lazyRouteComponent(() => import("../pages/agents/agents-page.tsx"), "AgentsPage"),
});

const planStates: ReadonlySet<string> = new Set(["active", "archived", "deleted"]);

export const plansRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "plans",
  validateSearch: (search: Record<string, unknown>): { app?: string; state?: TestPlanState } => ({
    app: text(search.app),
    state: planStates.has(String(search.state)) ? (search.state as TestPlanState) : undefined,
  }),
  component: lazyRouteComponent(() => import("../pages/plans/plans-page.tsx"), "PlansPage"),
});

export const newPlanRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "plans/new",
  validateSearch: (search: Record<string, unknown>): { app?: string } => ({ app: text(search.app) }),
  component: lazyRouteComponent(() => import("../pages/plans/plan-form-pages.tsx"), "NewPlanPage"),
});

export const planRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "plans/$planId",
  component: lazyRouteComponent(() => import("../pages/plans/plan-page.tsx"), "PlanPage"),
});

export const editPlanRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "plans/$planId/edit",
  component: lazyRouteComponent(() => import("../pages/plans/plan-form-pages.tsx"), "EditPlanPage"),
});

/** Failure groups across runs (API.md §16), filtered by app and plan; `group` is the one opened on its occurrences. */
export const failuresRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "failures",
  validateSearch: (search: Record<string, unknown>): { app?: string; plan?: string; group?: string } => ({
    app: text(search.app),
    plan: text(search.plan),
    group: text(search.group),
  }),
  component: lazyRouteComponent(() => import("../pages/failures/failures-page.tsx"), "FailuresPage"),
});

/** A plan's flaky tests (GET /v1/tests): the plan chosen, else the first. */
export const flakyRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "flaky",
  validateSearch: (search: Record<string, unknown>): { plan?: string } => ({ plan: text(search.plan) }),
  component: lazyRouteComponent(() => import("../pages/flaky/flaky-page.tsx"), "FlakyPage"),
});

export const appsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "apps",
  // The page of apps shown (the newest without one).
  validateSearch: (search: Record<string, unknown>): { cursor?: string } => ({ cursor: text(search.cursor) }),
  component: lazyRouteComponent(() => import("../pages/apps/apps-page.tsx"), "AppsPage"),
});

export const appRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "apps/$packageName",
  // The page of versions shown (the newest without one).
  validateSearch: (search: Record<string, unknown>): { cursor?: string } => ({ cursor: text(search.cursor) }),
  component: lazyRouteComponent(() => import("../pages/apps/app-page.tsx"), "AppPage"),
});

export const settingsRoute = createRoute({
  getParentRoute: () => signedInRoute,
  path: "settings",
  component: lazyRouteComponent(() => import("../pages/settings/settings-page.tsx"), "SettingsPage"),
});

const routeTree = rootRoute.addChildren([
  signInRoute,
  signedInRoute.addChildren([
    indexRoute,
    runsRoute,
    runRoute,
    oldRunLinkRoute,
    agentsRoute,
    appsRoute,
    appRoute,
    plansRoute,
    newPlanRoute,
    planRoute,
    editPlanRoute,
    failuresRoute,
    flakyRoute,
    settingsRoute,
  ]),
]);

export const router = createRouter({
  routeTree,
  defaultPreload: "intent",
  defaultNotFoundComponent: () => (
    <p className="p-8">
      No such page.{" "}
      <a className="text-accent underline" href="/runs">
        See the runs
      </a>
      .
    </p>
  ),
});

declare module "@tanstack/react-router" {
  interface Register {
    router: typeof router;
  }
}
