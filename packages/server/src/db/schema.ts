/**
 * Table types as Kysely sees them. Timestamps are ISO-8601 UTC strings with milliseconds in both dialects,
 * so they compare and sort the same on SQLite and PostgreSQL.
 */
export interface Database {
  organizations: OrganizationsTable;
  clients: ClientsTable;
  signing_keys: SigningKeysTable;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: string;
}

export type ClientRole = "ci" | "agent" | "admin";

export interface ClientsTable {
  id: string;
  organization_id: string;
  role: ClientRole;
  /** `scrypt$N$r$p$salt$hash`; the secret itself is never stored. */
  secret_hash: string;
  created_at: string;
  disabled_at: string | null;
}

export interface SigningKeysTable {
  id: string;
  algorithm: string;
  private_key_pem: string;
  created_at: string;
}
