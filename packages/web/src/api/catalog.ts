import { queryOptions } from "@tanstack/react-query";
import { api } from "./client.ts";
import { unwrap } from "./problem.ts";

// Apps, plans and agents: read by the runs filters, a run's header and the agents page.

export const appsQuery = queryOptions({
  queryKey: ["apps"],
  queryFn: async () => unwrap(await api.GET("/v1/apps", { params: { query: { limit: 100 } } })).items,
  staleTime: 60_000,
});

export const plansQuery = (app: string | undefined) =>
  queryOptions({
    queryKey: ["plans", app ?? null],
    queryFn: async () =>
      unwrap(await api.GET("/v1/testplans", { params: { query: { limit: 100, package_name: app } } })).items,
    staleTime: 60_000,
  });

export const planQuery = (id: string) =>
  queryOptions({
    queryKey: ["plan", id],
    queryFn: async () => unwrap(await api.GET("/v1/testplans/{id}", { params: { path: { id } } })),
    staleTime: 60_000,
  });

export const agentsQuery = queryOptions({
  queryKey: ["agents"],
  queryFn: async () => unwrap(await api.GET("/v1/agents")).items,
  // Agents come and go and devices turn busy: the page stays current without a reload.
  refetchInterval: 5_000,
});
