import type { Kysely } from "kysely";
import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import { newestFirstPage } from "../../db/keyset.ts";
import type { Database } from "../../db/schema.ts";
import type { Principal } from "../../http/fastify-types.ts";
import { decodeCursor, type Position, toPage } from "../../http/pagination.ts";
import { newId } from "../../ids.ts";

/** Who did it. */
export interface Actor {
  /** `person`: signed in to the dashboard; `client`: an x-api-key client; `server`: the admin CLI or the server. */
  type: "person" | "client" | "server";
  /** The person's email, the client's ID, or `testbay-server`. */
  id: string;
}

/** What the admin CLI (or the server, at its first start) does is done by whoever runs the server. */
export const serverActor: Actor = { type: "server", id: "testbay-server" };

/** The caller of a request, as the audit log names them. */
export function actorOf(principal: Principal): Actor {
  return principal.person
    ? { type: "person", id: principal.person.email }
    : { type: "client", id: principal.clientId };
}

export type AuditAction =
  | "execution.triggered"
  | "execution.cancelled"
  | "test_plan.created"
  | "test_plan.updated"
  | "test_plan.archived"
  | "test_plan.deleted"
  | "test_plan.restored"
  | "client.created"
  | "client.disabled"
  | "client.enabled"
  | "client.rotated"
  | "user.created"
  | "user.disabled"
  | "user.enabled"
  | "user.role_changed"
  | "test.quarantined"
  | "test.unquarantined"
  | "webhook.created"
  | "webhook.updated"
  | "webhook.deleted"
  | "webhook.secret_rotated"
  | "schedule.created"
  | "schedule.updated"
  | "schedule.deleted";

export interface AuditEntry {
  organizationId: string;
  actor: Actor;
  action: AuditAction;
  target: {
    type: "execution" | "test_plan" | "client" | "user" | "test" | "webhook" | "schedule";
    id: string;
  };
  details?: Record<string, unknown>;
}

interface AuditRecord {
  id: string;
  createdAt: string;
  actor: Actor;
  action: string;
  target: { type: string; id: string };
  details: Record<string, unknown> | null;
}

const view = (record: AuditRecord) => ({
  id: record.id,
  at: record.createdAt,
  actor: record.actor,
  action: record.action,
  target: record.target,
  details: record.details,
});

/**
 * The audit log: the services that change plans, runs, clients and people append to it after the change
 * succeeded; admins read it newest first. A failed write fails the request: an action that the log does
 * not show would be worse than one the caller retries (triggers take an Idempotency-Key for that).
 */
export class AuditLog {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async record(entry: AuditEntry): Promise<void> {
    const now = this.clock.now();
    await this.db
      .insertInto("audit_events")
      .values({
        id: newId("aud", now),
        organization_id: entry.organizationId,
        created_at: isoTime(now),
        actor_type: entry.actor.type,
        actor_id: entry.actor.id,
        action: entry.action,
        target_type: entry.target.type,
        target_id: entry.target.id,
        details: entry.details === undefined ? null : JSON.stringify(entry.details),
      })
      .execute();
  }

  /** The organization's events, newest first, a page at a time. */
  async list(organizationId: string, query: { limit?: number; cursor?: string }) {
    const limit = query.limit ?? 50;
    const after = decodeCursor(query.cursor);
    const rows = await this.select(organizationId, limit, after);
    return toPage(rows, limit, view);
  }

  private async select(organizationId: string, limit: number, after: Position | undefined) {
    const query = this.db
      .selectFrom("audit_events")
      .selectAll()
      .where("organization_id", "=", organizationId);
    const rows = await newestFirstPage(query, limit, after).execute();
    return rows.map(
      (row): AuditRecord => ({
        id: row.id,
        createdAt: row.created_at,
        actor: { type: row.actor_type as Actor["type"], id: row.actor_id },
        action: row.action,
        target: { type: row.target_type, id: row.target_id },
        details: row.details === null ? null : (JSON.parse(row.details) as Record<string, unknown>),
      }),
    );
  }
}
