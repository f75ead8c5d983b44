import { type Kysely, sql } from "kysely";
import pg from "pg";
import type { Database } from "../../db/schema.ts";
import { loggableConnectionError } from "../../redact-connection-url.ts";
import { LocalWorkSignal, type WorkSignal } from "./work-signal.ts";

const channel = "testbay_work";

/**
 * Wake-ups shared by every API instance on one PostgreSQL database: a trigger on one instance wakes the
 * claims waiting on all of them (NOTIFY to a channel each instance LISTENs on, with the organization as
 * payload). The listening connection is its own, outside the pool; while it is down (a restart, a
 * failover) waiting claims still look again every poll interval, and it reconnects with backoff.
 */
export class PostgresWorkSignal implements WorkSignal {
  private readonly local = new LocalWorkSignal();
  private listener: pg.Client | undefined;
  private closed = false;
  private retryMs = 1000;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly databaseUrl: string,
    private readonly db: Kysely<Database>,
    private readonly log: { warn(details: object, message: string): void },
  ) {}

  /** Starts listening; resolves once the first connection listens (or failed and will be retried). */
  async start(): Promise<void> {
    await this.connect();
  }

  notify(organizationId: string): void {
    sql`select pg_notify(${channel}, ${organizationId})`
      .execute(this.db)
      .catch((error) => this.log.warn({ err: error }, "could not announce new work to other instances"));
  }

  wait(organizationId: string, ms: number, abort?: AbortSignal): Promise<void> {
    return this.local.wait(organizationId, ms, abort);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.listener?.end().catch(() => {});
    await this.local.close();
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on("notification", (message) => {
      if (message.channel === channel && message.payload) this.local.notify(message.payload);
    });
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, new Error("connection ended")));
    try {
      await client.connect();
      await client.query(`listen ${channel}`);
      this.listener = client;
      this.retryMs = 1000;
    } catch (error) {
      this.lost(client, error as Error);
    }
  }

  private lost(client: pg.Client, error: Error): void {
    if (this.closed || (this.listener !== undefined && this.listener !== client)) return;
    this.listener = undefined;
    client.removeAllListeners();
    client.on("error", () => {});
    client.end().catch(() => {});
    if (this.retryTimer) return;
    this.log.warn(
      { error: loggableConnectionError(error), retry_in_ms: this.retryMs },
      "work wake-ups from other instances paused",
    );
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(30_000, this.retryMs * 2);
  }
}
