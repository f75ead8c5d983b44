/**
 * Appending to the event outbox and reading it. `append` takes the caller's transaction (or connection):
 * an event is written with the change that causes it, so a rolled-back change leaves no event and a committed
 * one never lacks its event.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";
import { newId } from "../../ids.ts";
import type { EventType, NewEvent, StoredEvent } from "./types.ts";

export async function append(db: Kysely<Database>, event: NewEvent): Promise<string> {
  const id = newId("evt", Date.parse(event.at));
  await db
    .insertInto("events")
    .values({
      id,
      organization_id: event.organizationId,
      type: event.type,
      subject_id: event.subjectId,
      payload: JSON.stringify(event.data),
      created_at: event.at,
    })
    .execute();
  return id;
}

/** An organization's events in the order they happened, oldest first (events_org_created_idx), optionally of one type. */
export async function eventsOf(
  db: Kysely<Database>,
  organizationId: string,
  options: { type?: EventType; limit?: number } = {},
): Promise<StoredEvent[]> {
  let query = db
    .selectFrom("events")
    .selectAll()
    .where("organization_id", "=", organizationId)
    .orderBy("created_at", "asc")
    .orderBy("id", "asc")
    .limit(options.limit ?? 1000);
  if (options.type !== undefined) query = query.where("type", "=", options.type);
  const rows = await query.execute();
  return rows.map((row) => ({
    id: row.id,
    organizationId: row.organization_id,
    type: row.type as EventType,
    subjectId: row.subject_id,
    data: JSON.parse(row.payload) as Record<string, unknown>,
    createdAt: row.created_at,
  }));
}
