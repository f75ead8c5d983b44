import type { ClientRecord } from "./clients.repo.ts";

/** A client as the API shows it: never its secret's hash. */
export function clientView(client: ClientRecord) {
  return {
    client_id: client.id,
    name: client.name,
    role: client.role,
    org: client.organizationName,
    created_at: client.createdAt,
    disabled_at: client.disabledAt,
    all_orgs: client.allOrganizations,
  };
}
