/**
 * Fan-out: turns new outbox events (features/events) into one delivery per enabled endpoint of the
 * organization that subscribed to the event's type. Each event is fanned out exactly once whichever instance
 * does it: the deliveries are inserted and the event marked dispatched in one transaction, with the events
 * taken FOR UPDATE SKIP LOCKED on PostgreSQL (instances take different events, so none describes an event
 * another has taken) and under SQLite's single writer otherwise.
 */
import { type Kysely, sql } from "kysely";
import { type Clock, isoTime } from "../../clock.ts";
import type { Dialect } from "../../db/kysely.ts";
import type { Database } from "../../db/schema.ts";
import { newId } from "../../ids.ts";
import type { StoredEvent } from "../events/index.ts";
import { executionEventSequence } from "./execution-sequence.ts";

/**
 * The `data` a webhook sends for an event. The outbox keeps what identifies the subject (an execution's id
 * and status); a describer can replace it with the full object API.md §9 names (the execution object).
 * Undefined: send the event's own data.
 */
export type EventDescriber = (event: StoredEvent) => Promise<Record<string, unknown> | undefined>;

/** Events per round: enough for bursts (50 finished executions a second), small enough for one transaction. */
export const fanOutBatchSize = 200;
const batchSize = fanOutBatchSize;

/**
 * How often each instance fans out without being told. A round starts on a signal: this instance changed an
 * execution (which is when device-runs append execution.started and execution.finished, and features/tests
 * test.flaky_detected with the finish). The poll only catches what no signal here announced: events appended
 * without one (version.uploaded), and those of an instance that died before fanning them out. Two seconds late
 * is fine for those, and an idle instance makes one small query every two seconds.
 */
export const fanOutBackstopMs = 2000;

/**
 * The least time between two fan-out rounds started by signals. Every claim and completion signals; at
 * hundreds a second, back-to-back rounds of one event each cost a statement or more per claim + complete cycle
 * (`npm run bench -- claim`: 6.15 statements per cycle on PostgreSQL against 5.15 without), while a round per
 * 100 ms takes them in batches. An event after a quiet spell still goes out at once.
 */
export const fanOutWakeGapMs = 100;

type EventRow = Database["events"];

interface Planned {
  eventId: string;
  deliveries: Database["webhook_deliveries"][];
}

interface Written {
  events: number;
  deliveries: number;
}

export class WebhookFanOut {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly dialect: Dialect,
    private readonly clock: Clock,
    private readonly describe: EventDescriber = async () => undefined,
  ) {}

  /**
   * Rounds until the outbox is drained (a full batch means a backlog: a burst, or a restart), calling
   * `onDeliveries` after each round that inserted deliveries, so sending starts with the first batch.
   */
  async drain(onDeliveries: () => void): Promise<void> {
    for (;;) {
      const { events, deliveries } = await this.round();
      if (deliveries > 0) onDeliveries();
      if (events < batchSize) return;
    }
  }

  /** One round; how many events it fanned out. Run it until it returns less than batchSize to drain a backlog. */
  async dispatch(): Promise<number> {
    return (await this.round()).events;
  }

  /** One round: how many events it fanned out, and how many deliveries those made. */
  private async round(): Promise<Written> {
    if (this.dialect === "postgres") {
      // One transaction holding its events: instances take disjoint batches (SKIP LOCKED) and none describes
      // events another has taken. Describing reads through other pooled connections meanwhile.
      return this.db.transaction().execute(async (trx) => {
        const rows = await sql<EventRow>`select * from events where dispatched_at is null
          order by created_at, id limit ${batchSize} for update skip locked`.execute(trx);
        return this.write(trx, await this.plan(rows.rows));
      });
    }
    // SQLite: read and describe first (its one connection is busy inside a transaction), then write in one
    // IMMEDIATE transaction, keeping only the events still undispatched.
    const rows = await this.db
      .selectFrom("events")
      .selectAll()
      .where("dispatched_at", "is", null)
      .orderBy("created_at")
      .orderBy("id")
      .limit(batchSize)
      .execute();
    const planned = await this.plan(rows);
    return this.db.transaction().execute(async (trx) => {
      if (planned.length === 0) return { events: 0, deliveries: 0 };
      const taken = await sql<{ id: string }>`select id from events
        where id in (${sql.join(planned.map((p) => p.eventId))}) and dispatched_at is null`.execute(trx);
      const takenIds = new Set(taken.rows.map((row) => row.id));
      return this.write(
        trx,
        planned.filter((p) => takenIds.has(p.eventId)),
      );
    });
  }

  /** The deliveries each event makes: one per enabled endpoint of its organization subscribed to its type. */
  private async plan(rows: EventRow[]): Promise<Planned[]> {
    if (rows.length === 0) return [];
    const organizations = [...new Set(rows.map((row) => row.organization_id))];
    const webhooks = await this.db
      .selectFrom("webhooks")
      .select(["id", "organization_id", "events", "created_at"])
      .where("organization_id", "in", organizations)
      .where("enabled", "=", 1)
      .execute();
    const subscribers = webhooks.map((w) => ({ ...w, types: new Set(JSON.parse(w.events) as string[]) }));

    const planned: Planned[] = [];
    const now = isoTime(this.clock.now());
    for (const row of rows) {
      // An endpoint gets the events that happen after it was created, not the outbox's past.
      const targets = subscribers.filter(
        (w) =>
          w.organization_id === row.organization_id &&
          w.types.has(row.type) &&
          w.created_at <= row.created_at,
      );
      if (targets.length === 0) {
        planned.push({ eventId: row.id, deliveries: [] });
        continue;
      }
      const event: StoredEvent = {
        id: row.id,
        organizationId: row.organization_id,
        type: row.type as StoredEvent["type"],
        subjectId: row.subject_id,
        data: JSON.parse(row.payload) as Record<string, unknown>,
        createdAt: row.created_at,
      };
      const described = (await this.describe(event)) ?? event.data;
      const sequence = executionEventSequence(row.type);
      const data = sequence === undefined ? described : { ...described, sequence };
      const body = JSON.stringify({ type: row.type, timestamp: row.created_at, data });
      planned.push({
        eventId: row.id,
        deliveries: targets.map((w) => ({
          id: newId("msg", this.clock.now()),
          webhook_id: w.id,
          organization_id: row.organization_id,
          event_id: row.id,
          type: row.type,
          payload: body,
          status: "pending" as const,
          attempts: 0,
          next_attempt_at: now,
          lease_id: null,
          lease_expires_at: null,
          created_at: now,
          updated_at: now,
        })),
      });
    }

    return planned;
  }

  /** Inserts the deliveries and marks the events dispatched, in the caller's transaction. */
  private async write(trx: Kysely<Database>, planned: Planned[]): Promise<Written> {
    if (planned.length === 0) return { events: 0, deliveries: 0 };
    const deliveries = planned.flatMap((p) => p.deliveries);
    for (let i = 0; i < deliveries.length; i += 100) {
      await trx
        .insertInto("webhook_deliveries")
        .values(deliveries.slice(i, i + 100))
        .execute();
    }
    await trx
      .updateTable("events")
      .set({ dispatched_at: isoTime(this.clock.now()) })
      .where(
        "id",
        "in",
        planned.map((p) => p.eventId),
      )
      .execute();
    return { events: planned.length, deliveries: deliveries.length };
  }
}
