import { type Kysely, sql } from "kysely";
import pg from "pg";
import { loggableConnectionError } from "../redact-connection-url.ts";
import type { Database } from "./schema.ts";

type Handler = (payload: string) => void;

/**
 * PostgreSQL's NOTIFY/LISTEN as a message channel between API instances on one database: what one
 * instance announces (new work for agents, a changed execution for dashboards) reaches every instance.
 * One listening connection per instance, outside the pool, for every channel; sending goes through the
 * pool. Messages are hints: while the listening connection is down (a restart, a failover) they are lost,
 * so every user also looks again on its own from time to time, and the connection comes back with backoff.
 */
export class PostgresNotifications {
  private readonly handlers = new Map<string, Handler[]>();
  private listener: pg.Client | undefined;
  private closed = false;
  private retryMs = 1000;
  private retryTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly databaseUrl: string,
    private readonly db: Kysely<Database>,
    private readonly log: { warn(details: object, message: string): void },
  ) {}

  /** Registers a channel's handler; call before start(). Channel names are ours: lowercase identifiers. */
  on(channel: string, handler: Handler): void {
    if (!/^[a-z_]+$/.test(channel)) throw new Error(`not a channel name: ${channel}`);
    this.handlers.set(channel, [...(this.handlers.get(channel) ?? []), handler]);
  }

  /** Starts listening; resolves once the first connection listens (or failed and will be retried). */
  async start(): Promise<void> {
    await this.connect();
  }

  /** Sends to every instance, this one included (through its own listening connection). */
  notify(channel: string, payload: string): void {
    sql`select pg_notify(${channel}, ${payload})`
      .execute(this.db)
      .catch((error) => this.log.warn({ err: error, channel }, "could not notify other instances"));
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retryTimer);
    await this.listener?.end().catch(() => {});
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.databaseUrl });
    client.on("notification", (message) => {
      if (message.payload === undefined) return;
      for (const handler of this.handlers.get(message.channel) ?? []) handler(message.payload);
    });
    client.on("error", (error) => this.lost(client, error));
    client.on("end", () => this.lost(client, new Error("connection ended")));
    try {
      await client.connect();
      // Channel names are checked in on(): safe to write into the statement, which takes no parameters.
      for (const channel of this.handlers.keys()) await client.query(`listen ${channel}`);
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
      "messages from other instances paused",
    );
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.connect();
    }, this.retryMs);
    this.retryTimer.unref();
    this.retryMs = Math.min(30_000, this.retryMs * 2);
  }
}
