import { type RawBuilder, type SelectQueryBuilder, sql } from "kysely";
import type { Position } from "../http/pagination.ts";

/**
 * Rows after `position` in newest-first order, on a table's `(created_at, id)`. A row-value comparison: both
 * PostgreSQL and SQLite answer it from an index on those two columns, so a page costs the same at any depth.
 * `table` qualifies the columns when the query joins other tables.
 */
function olderThan(position: Position, table?: string): RawBuilder<boolean> {
  return sql<boolean>`(${column("created_at", table)}, ${column("id", table)}) < (${position.createdAt}, ${position.id})`;
}

/**
 * One page of a list, newest first: the rows of `query` after `after`, ordered by `(created_at, id)` descending,
 * and `limit + 1` of them, the extra row saying there is a next page (`toPage` in http/pagination.ts splits it
 * off). Every list's index ends in those two columns (db/migrations/2026-11-22-0004-executions.ts), so the
 * order and the comparison are the index's. `table` qualifies the columns when the query joins other tables.
 */
export function newestFirstPage<DB, TB extends keyof DB, O>(
  query: SelectQueryBuilder<DB, TB, O>,
  limit: number,
  after: Position | undefined,
  table?: string,
): SelectQueryBuilder<DB, TB, O> {
  const rest = after ? query.where(olderThan(after, table)) : query;
  return rest
    .orderBy(column("created_at", table), "desc")
    .orderBy(column("id", table), "desc")
    .limit(limit + 1);
}

function column(name: "created_at" | "id", table: string | undefined) {
  return sql.ref(table ? `${table}.${name}` : name);
}
