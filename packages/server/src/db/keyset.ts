import { type RawBuilder, sql } from "kysely";
import type { Position } from "../http/pagination.ts";

/**
 * Rows after `position` in newest-first order, on a table's `(created_at, id)`. A row-value comparison: both
 * PostgreSQL and SQLite answer it from an index on those two columns, so a page costs the same at any depth.
 */
export function olderThan(position: Position): RawBuilder<boolean> {
  return sql<boolean>`(created_at, id) < (${position.createdAt}, ${position.id})`;
}
