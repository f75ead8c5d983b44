import { queryOptions } from "@tanstack/react-query";
import type { components, operations } from "../../../client/src/sdk/api.generated.ts";
import { api } from "./client.ts";
import { unwrap } from "./problem.ts";

// Settings (admins): the organization's clients and people (API.md §8 and §10, over HTTP). Secrets and generated
// passwords come back only from the calls that make them and are never kept in the query cache: a page shows
// one once, then forgets it.

type JsonOf<
  Operation extends keyof operations,
  Status extends number = 200,
> = operations[Operation]["responses"] extends {
  [S in Status]: { content: { "application/json": infer Body } };
}
  ? Body
  : never;

export type Client = components["schemas"]["Client"];
export type ClientRole = Client["role"];
export type IssuedClient = JsonOf<"createClient", 201>;
export type User = JsonOf<"listUsers">["items"][number];
export type PersonRole = User["role"];
export type IssuedAccount = JsonOf<"createUser", 201>;

export const clientRoles: readonly ClientRole[] = ["ci", "agent", "admin"];
export const personRoles: readonly PersonRole[] = ["viewer", "member", "admin"];

/** What each role is for, short enough for a select on a phone. */
export const clientRoleHelp: Record<ClientRole, string> = {
  ci: "ci: a CI pipeline",
  agent: "agent: a device host",
  admin: "admin: manages clients and people",
};

/**
 * The name the server gives the client of its built-in local agent (packages/server/src/features/agent/local-agent.ts),
 * which runs device-less steps inside the server: Settings says what it is.
 */
export const localAgentClientName = "Built-in local agent";

export const isLocalAgentClient = (client: Client) =>
  client.role === "agent" && client.name === localAgentClientName;

export const clientsQuery = queryOptions({
  queryKey: ["settings", "clients"],
  queryFn: async () => unwrap(await api.GET("/v1/clients")).items,
});

export const usersQuery = queryOptions({
  queryKey: ["settings", "users"],
  queryFn: async () => unwrap(await api.GET("/v1/users")).items,
});

/** A new client; `name` (what people call it, e.g. "nightly CI") is left out when blank. */
export async function createClient({
  role,
  name,
}: {
  role: ClientRole;
  name: string;
}): Promise<IssuedClient> {
  const named = name.trim();
  return unwrap(await api.POST("/v1/clients", { body: named ? { role, name: named } : { role } }));
}

/** Disable or enable: a disabled client's tokens stop working at once. */
export async function setClientEnabled(clientId: string, enabled: boolean): Promise<Client> {
  const params = { params: { path: { client_id: clientId } } };
  return enabled
    ? unwrap(await api.POST("/v1/clients/{client_id}/enable", params))
    : unwrap(await api.POST("/v1/clients/{client_id}/disable", params));
}

/** A new secret: the old one, and every token issued with it, stop working at once. */
export async function rotateClientSecret(clientId: string): Promise<IssuedClient> {
  return unwrap(
    await api.POST("/v1/clients/{client_id}/rotate", { params: { path: { client_id: clientId } } }),
  );
}

export async function createUser(email: string, role: PersonRole): Promise<IssuedAccount> {
  return unwrap(await api.POST("/v1/users", { body: { email, role } }));
}

export async function updateUser(
  email: string,
  change: { role?: PersonRole; disabled?: boolean },
): Promise<User> {
  return unwrap(await api.PATCH("/v1/users/{email}", { params: { path: { email } }, body: change }));
}
