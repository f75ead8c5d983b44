import { type RawBuilder, sql } from "kysely";
import type { Position } from "../http/pagination.ts";

/**
 * Rows after `position` in newest-first order, on a table's `(created_at, id)`. A row-value comparison: both
 * PostgreSQL and SQLite answer it from an index on those two columns, so a page costs the same at any depth.
 * `table` qualifies the columns when the query joins other tables.
 */
export function olderThan(position: Position, table?: string): RawBuilder<boolean> {
  const createdAt = table ? sql.ref(`${table}.created_at`) : sql.ref("created_at");
  const id = table ? sql.ref(`${table}.id`) : sql.ref("id");
  return sql<boolean>`(${createdAt}, ${id}) < (${position.createdAt}, ${position.id})`;
}
