import { type Kysely, sql } from "kysely";

/**
 * Webhooks (API.md §9, features/webhooks):
 * - `webhooks`: an organization's endpoints. `secret` is the Standard Webhooks signing secret (`whsec_…`); it
 *   must be readable to sign, so it is not hashed but sealed with AES-256-GCM under a key derived from the
 *   server's signing key (features/webhooks/secret-box.ts): a copy of the database alone does not reveal it.
 *   Null for Slack endpoints, which are not signed.
 * - `webhook_deliveries`: one row per message (`msg_…`, the `webhook-id` header, the same on every retry and
 *   on a redeliver), claimed by senders like jobs: `status = 'pending'` and due, and no live lease.
 * - `webhook_attempts`: the delivery log, one row per try.
 * - `events.dispatched_at`: set when the fan-out has turned an event into deliveries, in the same transaction,
 *   so each event is fanned out exactly once whichever instance does it. Events older than this migration are
 *   marked dispatched: there were no webhooks to deliver them to.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema
    .createTable("webhooks")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("organization_id", "text", (c) => c.notNull().references("organizations.id"))
    .addColumn("url", "text", (c) => c.notNull())
    .addColumn("events", "text", (c) => c.notNull())
    .addColumn("format", "text", (c) => c.notNull())
    .addColumn("description", "text")
    .addColumn("enabled", "integer", (c) => c.notNull())
    .addColumn("disabled_reason", "text")
    .addColumn("secret", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("webhooks_org_created_idx")
    .on("webhooks")
    .columns(["organization_id", "created_at", "id"])
    .execute();

  await db.schema
    .createTable("webhook_deliveries")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("webhook_id", "text", (c) => c.notNull().references("webhooks.id").onDelete("cascade"))
    .addColumn("organization_id", "text", (c) => c.notNull())
    .addColumn("event_id", "text")
    .addColumn("type", "text", (c) => c.notNull())
    .addColumn("payload", "text", (c) => c.notNull())
    .addColumn("status", "text", (c) => c.notNull())
    .addColumn("attempts", "integer", (c) => c.notNull().defaultTo(0))
    .addColumn("next_attempt_at", "text", (c) => c.notNull())
    .addColumn("lease_id", "text")
    .addColumn("lease_expires_at", "text")
    .addColumn("created_at", "text", (c) => c.notNull())
    .addColumn("updated_at", "text", (c) => c.notNull())
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_due_idx")
    .on("webhook_deliveries")
    .columns(["status", "next_attempt_at"])
    .execute();
  await db.schema
    .createIndex("webhook_deliveries_log_idx")
    .on("webhook_deliveries")
    .columns(["webhook_id", "created_at desc", "id desc"])
    .execute();

  await db.schema
    .createTable("webhook_attempts")
    .addColumn("id", "text", (c) => c.primaryKey())
    .addColumn("delivery_id", "text", (c) =>
      c.notNull().references("webhook_deliveries.id").onDelete("cascade"),
    )
    .addColumn("at", "text", (c) => c.notNull())
    .addColumn("status_code", "integer")
    .addColumn("duration_ms", "integer", (c) => c.notNull())
    .addColumn("error", "text")
    .addColumn("response_excerpt", "text")
    .execute();
  await db.schema
    .createIndex("webhook_attempts_delivery_idx")
    .on("webhook_attempts")
    .columns(["delivery_id", "at"])
    .execute();

  await db.schema.alterTable("events").addColumn("dispatched_at", "text").execute();
  await sql`update events set dispatched_at = created_at`.execute(db);
  // Only the events still to fan out are in it: it stays small however long the outbox grows.
  await sql`create index events_undispatched_idx on events (created_at, id) where dispatched_at is null`.execute(
    db,
  );
}

export async function down(db: Kysely<any>): Promise<void> {
  await sql`drop index events_undispatched_idx`.execute(db);
  await db.schema.alterTable("events").dropColumn("dispatched_at").execute();
  await db.schema.dropTable("webhook_attempts").execute();
  await db.schema.dropTable("webhook_deliveries").execute();
  await db.schema.dropTable("webhooks").execute();
}
