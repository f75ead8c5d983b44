import { type Kysely, sql } from "kysely";
import { newestFirstPage } from "../../db/keyset.ts";
import type { Dialect } from "../../db/kysely.ts";
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable } from "../../db/schema.ts";
import type { Position } from "../../http/pagination.ts";

export type WebhookFormat = "standard" | "slack";

export interface WebhookRecord {
  id: string;
  organizationId: string;
  url: string;
  events: string[];
  format: WebhookFormat;
  description: string | null;
  enabled: boolean;
  disabledReason: string | null;
  /** Sealed (secret-box.ts); null for Slack. */
  sealedSecret: string | null;
  createdAt: string;
  updatedAt: string;
}

type WebhookRow = Database["webhooks"];

const toWebhook = (row: WebhookRow): WebhookRecord => ({
  id: row.id,
  organizationId: row.organization_id,
  url: row.url,
  events: JSON.parse(row.events) as string[],
  format: row.format,
  description: row.description,
  enabled: Boolean(row.enabled),
  disabledReason: row.disabled_reason,
  sealedSecret: row.secret,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

export type DeliveryRow = WebhookDeliveriesTable;
export type AttemptRow = WebhookAttemptsTable;

export interface DeliveryWithAttempts extends DeliveryRow {
  attemptLog: AttemptRow[];
}

/** A delivery a sender holds, with what it needs to send it. */
export interface ClaimedDelivery extends DeliveryRow {
  url: string;
  format: WebhookFormat;
  secret: string | null;
}

export interface WebhookChanges {
  url?: string;
  events?: string[];
  description?: string | null;
  enabled?: boolean;
  disabledReason?: string | null;
  sealedSecret?: string | null;
}

/** Webhooks, their deliveries and the attempts of those. */
export class WebhooksRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
  ) {}

  async insert(webhook: WebhookRecord): Promise<void> {
    await this.db
      .insertInto("webhooks")
      .values({
        id: webhook.id,
        organization_id: webhook.organizationId,
        url: webhook.url,
        events: JSON.stringify(webhook.events),
        format: webhook.format,
        description: webhook.description,
        enabled: webhook.enabled ? 1 : 0,
        disabled_reason: webhook.disabledReason,
        secret: webhook.sealedSecret,
        created_at: webhook.createdAt,
        updated_at: webhook.updatedAt,
      })
      .execute();
  }

  async find(organizationId: string, id: string): Promise<WebhookRecord | undefined> {
    const row = await this.db
      .selectFrom("webhooks")
      .selectAll()
      .where("id", "=", id)
      .where("organization_id", "=", organizationId)
      .executeTakeFirst();
    return row && toWebhook(row);
  }

  /** Newest first, keyset paginated (webhooks_org_created_idx); one extra row says there is a next page. */
  async list(organizationId: string, limit: number, after: Position | undefined): Promise<WebhookRecord[]> {
    const query = this.db.selectFrom("webhooks").selectAll().where("organization_id", "=", organizationId);
    const rows = await newestFirstPage(query, limit, after).execute();
    return rows.map(toWebhook);
  }

  async update(
    organizationId: string,
    id: string,
    changes: WebhookChanges,
    at: string,
  ): Promise<WebhookRecord | undefined> {
    const values: Partial<WebhookRow> = { updated_at: at };
    if (changes.url !== undefined) values.url = changes.url;
    if (changes.events !== undefined) values.events = JSON.stringify(changes.events);
    if (changes.description !== undefined) values.description = changes.description;
    if (changes.enabled !== undefined) values.enabled = changes.enabled ? 1 : 0;
    if (changes.disabledReason !== undefined) values.disabled_reason = changes.disabledReason;
    if (changes.sealedSecret !== undefined) values.secret = changes.sealedSecret;
    await this.db
      .updateTable("webhooks")
      .set(values)
      .where("id", "=", id)
      .where("organization_id", "=", organizationId)
      .execute();
    return this.find(organizationId, id);
  }

  /** The webhook with its deliveries and their attempts; false if there was none. */
  async delete(organizationId: string, id: string): Promise<boolean> {
    return this.db.transaction().execute(async (trx) => {
      const found = await trx
        .selectFrom("webhooks")
        .select("id")
        .where("id", "=", id)
        .where("organization_id", "=", organizationId)
        .executeTakeFirst();
      if (!found) return false;
      await trx
        .deleteFrom("webhook_attempts")
        .where(
          "delivery_id",
          "in",
          trx.selectFrom("webhook_deliveries").select("id").where("webhook_id", "=", id),
        )
        .execute();
      await trx.deleteFrom("webhook_deliveries").where("webhook_id", "=", id).execute();
      await trx.deleteFrom("webhooks").where("id", "=", id).execute();
      return true;
    });
  }

  async insertDelivery(delivery: DeliveryRow): Promise<void> {
    await this.db.insertInto("webhook_deliveries").values(delivery).execute();
  }

  async findDelivery(webhookId: string, id: string): Promise<DeliveryRow | undefined> {
    return this.db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("id", "=", id)
      .where("webhook_id", "=", webhookId)
      .executeTakeFirst();
  }

  /** The delivery log: newest first (webhook_deliveries_log_idx), each with its attempts oldest first. */
  async deliveries(
    webhookId: string,
    limit: number,
    after: Position | undefined,
  ): Promise<DeliveryWithAttempts[]> {
    const query = this.db.selectFrom("webhook_deliveries").selectAll().where("webhook_id", "=", webhookId);
    const rows = await newestFirstPage(query, limit, after).execute();
    if (rows.length === 0) return [];
    const attempts = await this.db
      .selectFrom("webhook_attempts")
      .selectAll()
      .where(
        "delivery_id",
        "in",
        rows.map((row) => row.id),
      )
      .orderBy("at", "asc")
      .orderBy("id", "asc")
      .execute();
    return rows.map((row) => ({ ...row, attemptLog: attempts.filter((a) => a.delivery_id === row.id) }));
  }

  /** Sends the message again from the start of the schedule, under the same id (its `webhook-id`). */
  async redeliver(webhookId: string, id: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("webhook_deliveries")
      .set({
        status: "pending",
        attempts: 0,
        next_attempt_at: at,
        lease_id: null,
        lease_expires_at: null,
        updated_at: at,
      })
      .where("id", "=", id)
      .where("webhook_id", "=", webhookId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * Forgets delivered and failed messages last changed before `before`, with their attempts: the log is for
   * looking into recent trouble, and at 50 runs a second it would otherwise grow without end. Pending ones
   * stay whatever their age (a disabled endpoint's backlog waits to be enabled again). How many went.
   */
  async purgeFinishedBefore(before: string): Promise<number> {
    return this.db.transaction().execute(async (trx) => {
      const old = trx
        .selectFrom("webhook_deliveries")
        .select("id")
        .where("status", "in", ["delivered", "failed"])
        .where("updated_at", "<", before);
      await trx.deleteFrom("webhook_attempts").where("delivery_id", "in", old).execute();
      const result = await trx
        .deleteFrom("webhook_deliveries")
        .where("status", "in", ["delivered", "failed"])
        .where("updated_at", "<", before)
        .executeTakeFirst();
      return Number(result.numDeletedRows);
    });
  }

  /**
   * Takes up to `limit` due deliveries of enabled endpoints under a lease. A delivery whose lease lapsed (its
   * sender died mid-flight) is due again: at least once, never lost. On PostgreSQL SKIP LOCKED lets several
   * instances claim at once without taking the same rows or waiting on each other; SQLite has one writer.
   */
  async claimDue(
    now: string,
    limit: number,
    leaseId: string,
    leaseExpiresAt: string,
  ): Promise<ClaimedDelivery[]> {
    const due = sql`select d.id from webhook_deliveries d
      where d.status = 'pending' and d.next_attempt_at <= ${now}
        and (d.lease_expires_at is null or d.lease_expires_at <= ${now})
        and exists (select 1 from webhooks w where w.id = d.webhook_id and w.enabled = 1)
      order by d.next_attempt_at limit ${limit}`;
    const picked = this.dialect === "postgres" ? sql`${due} for update of d skip locked` : due;
    const claimed = await sql<DeliveryRow>`update webhook_deliveries
      set lease_id = ${leaseId}, lease_expires_at = ${leaseExpiresAt}
      where id in (${picked})
      returning *`.execute(this.db);
    if (claimed.rows.length === 0) return [];
    const webhooks = await this.db
      .selectFrom("webhooks")
      .select(["id", "url", "format", "secret"])
      .where("id", "in", [...new Set(claimed.rows.map((row) => row.webhook_id))])
      .execute();
    const byId = new Map(webhooks.map((w) => [w.id, w]));
    return claimed.rows.flatMap((row) => {
      const webhook = byId.get(row.webhook_id);
      return webhook ? [{ ...row, url: webhook.url, format: webhook.format, secret: webhook.secret }] : [];
    });
  }

  /**
   * Records an attempt and what follows from it, if the sender still holds the lease (otherwise another
   * sender has taken the delivery over and decides; the attempt is logged all the same). An endpoint deleted
   * while the attempt was in flight took its deliveries with it: then nothing is recorded.
   */
  async recordAttempt(
    attempt: AttemptRow,
    delivery: { id: string; webhookId: string; leaseId: string },
    next:
      | { status: "delivered" }
      | { status: "pending"; attempts: number; nextAttemptAt: string }
      | { status: "failed"; attempts: number; disabledReason: string },
  ): Promise<void> {
    await this.db.transaction().execute(async (trx) => {
      // Locked on PostgreSQL, so that deleting the endpoint waits for this transaction instead of slipping
      // between the check and the insert (the attempt's foreign key then failed: an unhandled rejection in the
      // sender). SQLite's single writer serializes the two already.
      const held = trx.selectFrom("webhook_deliveries").select("id").where("id", "=", delivery.id);
      const exists = await (this.dialect === "postgres" ? held.forUpdate() : held).executeTakeFirst();
      if (!exists) return;
      await trx.insertInto("webhook_attempts").values(attempt).execute();
      const base = trx
        .updateTable("webhook_deliveries")
        .where("id", "=", delivery.id)
        .where("lease_id", "=", delivery.leaseId);
      const cleared = { lease_id: null, lease_expires_at: null, updated_at: attempt.at };
      if (next.status === "delivered") {
        await base.set({ ...cleared, status: "delivered", attempts: sql`attempts + 1` }).execute();
      } else if (next.status === "pending") {
        await base
          .set({
            ...cleared,
            status: "pending",
            attempts: next.attempts,
            next_attempt_at: next.nextAttemptAt,
          })
          .execute();
      } else {
        const result = await base
          .set({ ...cleared, status: "failed", attempts: next.attempts })
          .executeTakeFirst();
        if (Number(result.numUpdatedRows) > 0) {
          await trx
            .updateTable("webhooks")
            .set({ enabled: 0, disabled_reason: next.disabledReason, updated_at: attempt.at })
            .where("id", "=", delivery.webhookId)
            .execute();
        }
      }
    });
  }
}
