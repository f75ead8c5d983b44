import type { Kysely } from "kysely";

/**
 * The request of each webhook attempt, for the delivery log (API.md §9, issue 17: "a delivery log with request,
 * response status, duration and body excerpt"): where it went (`request_url`: an endpoint's URL may be changed
 * between attempts) and every header Testbay set (`request_headers`, a JSON object, lower-case names; the
 * signature is an HMAC of that one message, not the secret). `request_body` holds the body only when it is not
 * the delivery's `payload` byte for byte (Slack's message, built at send time), at most 64 KiB
 * (features/webhooks/webhook-request.ts); a Standard Webhooks body is the payload itself, so it is not stored
 * again with each of up to eleven attempts. Attempts made before this migration have nulls: no request shown.
 */
export async function up(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("webhook_attempts").addColumn("request_url", "text").execute();
  await db.schema.alterTable("webhook_attempts").addColumn("request_headers", "text").execute();
  await db.schema.alterTable("webhook_attempts").addColumn("request_body", "text").execute();
}

export async function down(db: Kysely<any>): Promise<void> {
  await db.schema.alterTable("webhook_attempts").dropColumn("request_body").execute();
  await db.schema.alterTable("webhook_attempts").dropColumn("request_headers").execute();
  await db.schema.alterTable("webhook_attempts").dropColumn("request_url").execute();
}
