import type { Kysely } from "kysely";
import type { Database, PersonRole } from "../../db/schema.ts";

export interface UserRecord {
  id: string;
  organizationId: string;
  organizationName: string;
  email: string;
  role: PersonRole;
  passwordHash: string;
  createdAt: string;
  disabledAt: string | null;
  lastSignInAt: string | null;
}

/** A live session and the person it belongs to, as one read. */
export interface SessionRecord {
  idHash: string;
  lastSeenAt: string;
  user: UserRecord;
}

/** People and their sessions as stored. Nothing here decides who may do what: the services do. */
export class PeopleRepo {
  constructor(private readonly db: Kysely<Database>) {}

  async insertUser(
    user: Omit<UserRecord, "organizationName" | "disabledAt" | "lastSignInAt">,
  ): Promise<void> {
    await this.db
      .insertInto("users")
      .values({
        id: user.id,
        organization_id: user.organizationId,
        email: user.email,
        email_folded: foldEmail(user.email),
        role: user.role,
        password_hash: user.passwordHash,
        created_at: user.createdAt,
        disabled_at: null,
        last_sign_in_at: null,
      })
      .execute();
  }

  /** Organizations are the clients feature's; people only need to find one by name. */
  async findOrganizationId(name: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom("organizations")
      .select("id")
      .where("name", "=", name)
      .executeTakeFirst();
    return row?.id;
  }

  /** The organization's person with this email (case-insensitive): one at most (migration 0025). */
  async findUserInOrganization(organizationId: string, email: string): Promise<UserRecord | undefined> {
    const row = await this.selectUsers()
      .where("users.organization_id", "=", organizationId)
      .where("users.email_folded", "=", foldEmail(email))
      .executeTakeFirst();
    return row && toUserRecord(row);
  }

  /** The accounts with this email in any organization, by organization name; the first `limit` when given. */
  async findUsersByEmail(email: string, limit?: number): Promise<UserRecord[]> {
    let query = this.selectUsers()
      .where("users.email_folded", "=", foldEmail(email))
      .orderBy("organizations.name");
    if (limit !== undefined) query = query.limit(limit);
    return (await query.execute()).map(toUserRecord);
  }

  async findUser(id: string): Promise<UserRecord | undefined> {
    const row = await this.selectUsers().where("users.id", "=", id).executeTakeFirst();
    return row && toUserRecord(row);
  }

  /** Every person (or an organization's), by organization name, then email. */
  async listUsers(organizationId?: string): Promise<UserRecord[]> {
    let query = this.selectUsers();
    if (organizationId !== undefined) query = query.where("users.organization_id", "=", organizationId);
    const rows = await query.orderBy("organizations.name").orderBy("users.email_folded").execute();
    return rows.map(toUserRecord);
  }

  async setPasswordHash(userId: string, passwordHash: string): Promise<void> {
    await this.db
      .updateTable("users")
      .set({ password_hash: passwordHash })
      .where("id", "=", userId)
      .execute();
  }

  async setRole(userId: string, role: PersonRole): Promise<void> {
    await this.db.updateTable("users").set({ role }).where("id", "=", userId).execute();
  }

  async setDisabledAt(userId: string, at: string | null): Promise<void> {
    await this.db.updateTable("users").set({ disabled_at: at }).where("id", "=", userId).execute();
  }

  /** A sign-in: the new session, and the person's last sign-in time. */
  async insertSession(session: { idHash: string; userId: string; at: string }): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("sessions")
        .values({
          id_hash: session.idHash,
          user_id: session.userId,
          created_at: session.at,
          last_seen_at: session.at,
        })
        .execute();
      await trx
        .updateTable("users")
        .set({ last_sign_in_at: session.at })
        .where("id", "=", session.userId)
        .execute();
    });
  }

  /** The session and its person, if it was used at or after `seenSince`; older ones are as good as gone. */
  async findSession(idHash: string, seenSince: string): Promise<SessionRecord | undefined> {
    const row = await this.selectUsers()
      .innerJoin("sessions", "sessions.user_id", "users.id")
      .select(["sessions.id_hash", "sessions.last_seen_at"])
      .where("sessions.id_hash", "=", idHash)
      .where("sessions.last_seen_at", ">=", seenSince)
      .executeTakeFirst();
    return row && { idHash: row.id_hash, lastSeenAt: row.last_seen_at, user: toUserRecord(row) };
  }

  async touchSession(idHash: string, at: string): Promise<void> {
    await this.db
      .updateTable("sessions")
      .set({ last_seen_at: at })
      .where("id_hash", "=", idHash)
      .where("last_seen_at", "<", at)
      .execute();
  }

  async deleteSession(idHash: string): Promise<void> {
    await this.db.deleteFrom("sessions").where("id_hash", "=", idHash).execute();
  }

  /** Ends every session of a person, or every one but `keep` (the one that changed the password). */
  async deleteSessionsOf(userId: string, keep?: string): Promise<void> {
    let query = this.db.deleteFrom("sessions").where("user_id", "=", userId);
    if (keep !== undefined) query = query.where("id_hash", "!=", keep);
    await query.execute();
  }

  async deleteSessionsIdleSince(before: string): Promise<number> {
    const result = await this.db.deleteFrom("sessions").where("last_seen_at", "<", before).executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  private selectUsers() {
    return this.db
      .selectFrom("users")
      .innerJoin("organizations", "organizations.id", "users.organization_id")
      .select([
        "users.id",
        "users.organization_id",
        "organizations.name as organization_name",
        "users.email",
        "users.role",
        "users.password_hash",
        "users.created_at",
        "users.disabled_at",
        "users.last_sign_in_at",
      ]);
  }
}

/** Email addresses compare case-insensitively: people do not remember how they capitalised theirs. */
export function foldEmail(email: string): string {
  return email.trim().toLowerCase();
}

interface UserRow {
  id: string;
  organization_id: string;
  organization_name: string;
  email: string;
  role: PersonRole;
  password_hash: string;
  created_at: string;
  disabled_at: string | null;
  last_sign_in_at: string | null;
}

function toUserRecord(row: UserRow): UserRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    organizationName: row.organization_name,
    email: row.email,
    role: row.role,
    passwordHash: row.password_hash,
    createdAt: row.created_at,
    disabledAt: row.disabled_at,
    lastSignInAt: row.last_sign_in_at,
  };
}
