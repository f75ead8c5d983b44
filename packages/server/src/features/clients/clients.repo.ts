import type { CompiledQuery, Kysely } from "kysely";
import type { ClientRole, Database } from "../../db/schema.ts";

export interface ClientRecord {
  id: string;
  organizationId: string;
  organizationName: string;
  role: ClientRole;
  /** What people call it; null when it was given none. */
  name: string | null;
  secretHash: string;
  createdAt: string;
  disabledAt: string | null;
  /** Tokens issued before this are refused (the last rotation or re-enabling). */
  tokensNotBefore: string | null;
  /** An agent client that claims the runs of every organization (`client create --all-orgs`, API.md §15). */
  allOrganizations: boolean;
}

export interface OrganizationRecord {
  id: string;
  name: string;
  createdAt: string;
  /** How many of its device runs may run at once (API.md §15); null: no limit. */
  maxConcurrentDeviceRuns?: number | null;
}

/** Organizations and clients as stored. Nothing here checks who may see what: the service does. */
export class ClientsRepo {
  /**
   * Compiled once: this lookup runs on every authenticated request, and building and compiling the query
   * each time cost more than running it.
   */
  private readonly findClientQuery: CompiledQuery<ClientRow>;

  constructor(private readonly db: Kysely<Database>) {
    this.findClientQuery = this.selectClients().where("clients.id", "=", "").compile();
    // The one parameter is the client ID: replaced on each call below.
  }

  async insertOrganization(org: OrganizationRecord): Promise<void> {
    await this.db
      .insertInto("organizations")
      .values({ id: org.id, name: org.name, created_at: org.createdAt })
      .execute();
  }

  async findOrganizationByName(name: string): Promise<OrganizationRecord | undefined> {
    const row = await this.db
      .selectFrom("organizations")
      .selectAll()
      .where("name", "=", name)
      .executeTakeFirst();
    return (
      row && {
        id: row.id,
        name: row.name,
        createdAt: row.created_at,
        maxConcurrentDeviceRuns: row.max_concurrent_device_runs,
      }
    );
  }

  /** Sets (null: clears) how many of the organization's device runs may run at once. */
  async setMaxConcurrentDeviceRuns(id: string, max: number | null): Promise<void> {
    await this.db
      .updateTable("organizations")
      .set({ max_concurrent_device_runs: max })
      .where("id", "=", id)
      .execute();
  }

  async listOrganizationNames(): Promise<string[]> {
    const rows = await this.db.selectFrom("organizations").select("name").orderBy("name").execute();
    return rows.map((row) => row.name);
  }

  /** Every organization, by name. */
  async listOrganizations(): Promise<OrganizationRecord[]> {
    const rows = await this.db.selectFrom("organizations").selectAll().orderBy("name").execute();
    return rows.map((row) => ({
      id: row.id,
      name: row.name,
      createdAt: row.created_at,
      maxConcurrentDeviceRuns: row.max_concurrent_device_runs,
    }));
  }

  async countOrganizations(): Promise<number> {
    const row = await this.db
      .selectFrom("organizations")
      .select((eb) => eb.fn.countAll<number | string>().as("n"))
      .executeTakeFirstOrThrow();
    return Number(row.n);
  }

  async insertClient(
    client: Omit<ClientRecord, "organizationName" | "disabledAt" | "tokensNotBefore" | "allOrganizations"> & {
      allOrganizations?: boolean;
    },
  ): Promise<void> {
    await this.db
      .insertInto("clients")
      .values({
        id: client.id,
        organization_id: client.organizationId,
        role: client.role,
        name: client.name,
        secret_hash: client.secretHash,
        created_at: client.createdAt,
        disabled_at: null,
        all_organizations: client.allOrganizations ? 1 : 0,
      })
      .execute();
  }

  /**
   * Names a client that has no name yet; one that has one keeps it. Idempotent, so every instance starting on
   * the same database may do it. Returns whether it named the client.
   */
  async nameIfUnnamed(id: string, name: string): Promise<boolean> {
    const result = await this.db
      .updateTable("clients")
      .set({ name })
      .where("id", "=", id)
      .where("name", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async findClient(id: string): Promise<ClientRecord | undefined> {
    const query: CompiledQuery<ClientRow> = { ...this.findClientQuery, parameters: [id] };
    const { rows } = await this.db.executeQuery(query);
    const row = rows[0];
    return row && toClientRecord(row);
  }

  /** The organization's clients, oldest first. */
  async listClients(organizationId: string): Promise<ClientRecord[]> {
    const rows = await this.selectClients()
      .where("clients.organization_id", "=", organizationId)
      .orderBy("clients.id")
      .execute();
    return rows.map(toClientRecord);
  }

  /** Every client of every organization (or of one), by organization name, then oldest first. */
  async listAllClients(organizationId?: string): Promise<ClientRecord[]> {
    let query = this.selectClients();
    if (organizationId !== undefined) query = query.where("clients.organization_id", "=", organizationId);
    const rows = await query.orderBy("organizations.name").orderBy("clients.id").execute();
    return rows.map(toClientRecord);
  }

  private selectClients() {
    return this.db
      .selectFrom("clients")
      .innerJoin("organizations", "organizations.id", "clients.organization_id")
      .select([
        "clients.id",
        "clients.organization_id",
        "organizations.name as organization_name",
        "clients.role",
        "clients.name",
        "clients.secret_hash",
        "clients.created_at",
        "clients.disabled_at",
        "clients.tokens_not_before",
        "clients.all_organizations",
      ]);
  }

  async disableClient(id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("clients")
      .set({ disabled_at: at })
      .where("id", "=", id)
      .where("disabled_at", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async enableClient(id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("clients")
      .set({ disabled_at: null, tokens_not_before: at })
      .where("id", "=", id)
      .where("disabled_at", "is not", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Replaces the secret's hash and voids older tokens in one statement: no moment has one without the other. */
  async replaceSecret(id: string, secretHash: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("clients")
      .set({ secret_hash: secretHash, tokens_not_before: at })
      .where("id", "=", id)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }
}

interface ClientRow {
  id: string;
  organization_id: string;
  organization_name: string;
  role: ClientRole;
  name: string | null;
  secret_hash: string;
  created_at: string;
  disabled_at: string | null;
  tokens_not_before: string | null;
  all_organizations: number;
}

function toClientRecord(row: ClientRow): ClientRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    role: row.role,
    name: row.name,
    secretHash: row.secret_hash,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    tokensNotBefore: row.tokens_not_before,
    allOrganizations: Number(row.all_organizations) === 1,
  };
}
