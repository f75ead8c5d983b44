// Preloaded into the claim benchmark's server process (node --import), never into a real server: counts every
// statement the server sends to its database, where it leaves the process. PostgreSQL: each pg Client#query
// call is one statement on the wire (Kysely sends BEGIN and COMMIT through it too; LISTEN and pg_notify
// count). SQLite: each run/all/get/iterate of a prepared statement, and each exec or pragma, is one (Kysely's
// BEGIN IMMEDIATE and COMMIT are prepared statements too). On SIGUSR2 the count so far is written to the file
// named by BENCH_STATEMENT_COUNT_FILE, which the benchmark reads before and after a drain.
// Why here and not in PostgreSQL: pg_stat_statements is not installed, pg_stat_database counts transactions
// (not statements), and log_statement would change a shared server's logging; counting in the client counts
// the same statements for both databases, BEGIN and COMMIT included.
import { renameSync, writeFileSync } from "node:fs";
import Sqlite from "better-sqlite3";
import pg from "pg";

let count = 0;

const query = pg.Client.prototype.query;
pg.Client.prototype.query = function countedQuery(...args) {
  count++;
  return query.apply(this, args);
};

const probe = new Sqlite(":memory:");
const Statement = Object.getPrototypeOf(probe.prepare("select 1"));
probe.close();
for (const method of ["run", "all", "get", "iterate"]) {
  const original = Statement[method];
  Statement[method] = function counted(...args) {
    count++;
    return original.apply(this, args);
  };
}
for (const method of ["exec", "pragma"]) {
  const original = Sqlite.prototype[method];
  Sqlite.prototype[method] = function counted(...args) {
    count++;
    return original.apply(this, args);
  };
}

const file = process.env.BENCH_STATEMENT_COUNT_FILE;
// Written aside and renamed, so the benchmark never reads a half-written number.
if (file) {
  process.on("SIGUSR2", () => {
    writeFileSync(`${file}.part`, String(count));
    renameSync(`${file}.part`, file);
  });
}
