import { createHash } from "node:crypto";
import type { Kysely } from "kysely";
import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import type { Database } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";

/** How long a key is remembered per client. */
export const idempotencyWindowMs = 24 * 3600 * 1000;
const waitForFirstMs = 30_000;
const pollMs = 50;

export interface StoredResponse {
  status: number;
  contentType: string;
  body: string;
}

export type Claim = { kind: "first" } | { kind: "replay"; response: StoredResponse };

/** JSON with object keys sorted, so the same body always has the same fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) =>
      a < b ? -1 : a > b ? 1 : 0,
    );
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value);
}

export function fingerprint(route: string, body: unknown): string {
  return createHash("sha256").update(route).update("\n").update(canonical(body)).digest("hex");
}

/**
 * `Idempotency-Key` records, per client, in the database: shared by every instance, so a retry that lands
 * on another instance is still recognised. The first request claims the key by inserting its row; the
 * primary key makes that claim exclusive, and a concurrent request with the same key waits for the first
 * to finish and then replays its response.
 */
export class IdempotencyStore {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly clock: Clock,
  ) {}

  async claim(clientId: string, key: string, print: string): Promise<Claim> {
    const deadline = Date.now() + waitForFirstMs;
    for (;;) {
      const now = this.clock.now();
      const inserted = await this.db
        .insertInto("idempotency_keys")
        .values({
          client_id: clientId,
          key,
          fingerprint: print,
          status_code: null,
          content_type: null,
          body: null,
          created_at: isoTime(now),
          expires_at: isoTime(now + idempotencyWindowMs),
        })
        .onConflict((oc) => oc.columns(["client_id", "key"]).doNothing())
        .executeTakeFirst();
      if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { kind: "first" };

      const row = await this.db
        .selectFrom("idempotency_keys")
        .selectAll()
        .where("client_id", "=", clientId)
        .where("key", "=", key)
        .executeTakeFirst();
      if (!row) continue;
      if (row.expires_at <= isoTime(now)) {
        await this.db
          .deleteFrom("idempotency_keys")
          .where("client_id", "=", clientId)
          .where("key", "=", key)
          .where("expires_at", "=", row.expires_at)
          .execute();
        continue;
      }
      if (row.fingerprint !== print) {
        throw new ApiError("idempotency_key_reused", {
          detail: `Idempotency-Key ${JSON.stringify(key)} was used in the last 24 hours for a different request.`,
        });
      }
      if (row.status_code !== null && row.body !== null) {
        return {
          kind: "replay",
          response: {
            status: row.status_code,
            contentType: row.content_type ?? "application/json",
            body: row.body,
          },
        };
      }
      if (Date.now() > deadline) {
        throw new ApiError("service_unavailable", {
          detail: "The first request with this Idempotency-Key is still being handled.",
          fix: "Retry with the same Idempotency-Key after a short wait: its response will be replayed.",
        });
      }
      await new Promise((resolve) => setTimeout(resolve, pollMs));
    }
  }

  async complete(clientId: string, key: string, response: StoredResponse): Promise<void> {
    await this.db
      .updateTable("idempotency_keys")
      .set({ status_code: response.status, content_type: response.contentType, body: response.body })
      .where("client_id", "=", clientId)
      .where("key", "=", key)
      .execute();
  }

  /** Forgets a claim whose request failed on the server's side, so a retry can run it afresh. */
  async release(clientId: string, key: string): Promise<void> {
    await this.db
      .deleteFrom("idempotency_keys")
      .where("client_id", "=", clientId)
      .where("key", "=", key)
      .execute();
  }

  async purgeExpired(): Promise<number> {
    const result = await this.db
      .deleteFrom("idempotency_keys")
      .where("expires_at", "<=", isoTime(this.clock.now()))
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}
