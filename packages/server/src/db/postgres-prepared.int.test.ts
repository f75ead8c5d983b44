// Always on PostgreSQL, whichever project collects it: the module is PostgreSQL's own. The rest of the postgres
// and scaled suites run every statement of the service through it (openDatabase prepares by default).
import { randomBytes } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { preparingStatements } from "./postgres-prepared.ts";

const adminUrl = process.env.TESTBAY_TEST_POSTGRES_URL ?? "postgres://postgres@127.0.0.1:5432/test";
const database = `testbay_prepared_${randomBytes(4).toString("hex")}`;
let pool: pg.Pool;

beforeAll(async () => {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${database}`);
  await admin.end();
  const url = new URL(adminUrl);
  url.pathname = `/${database}`;
  pool = new pg.Pool({ connectionString: url.toString(), max: 1 });
  const client = await pool.connect();
  await client.query("create table runs (id integer primary key, status text not null)");
  await client.query("insert into runs values (1, 'queued'), (2, 'running'), (3, 'passed')");
  client.release();
});

afterAll(async () => {
  await pool?.end();
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`drop database if exists ${database} with (force)`);
  await admin.end();
});

/** The statements prepared on this connection, as PostgreSQL lists them. */
async function preparedTexts(client: pg.PoolClient): Promise<string[]> {
  // A config object passes through unnamed-statement rewriting untouched, so this query never counts.
  const result = await client.query({
    text: "select statement from pg_prepared_statements order by statement",
  });
  return result.rows.map((row: { statement: string }) => row.statement);
}

describe("statements prepared per connection", () => {
  it("prepares a text the fifth time a connection runs it, and answers with each call's values", async () => {
    const client = preparingStatements(await pool.connect(), { minUses: 5, maxPerConnection: 10 });
    try {
      const text = "select status from runs where id = $1";
      const answers: string[] = [];
      for (const id of [1, 2, 3, 1]) answers.push((await client.query(text, [id])).rows[0].status);
      expect(await preparedTexts(client)).not.toContain(text);
      for (const id of [2, 3, 1]) answers.push((await client.query(text, [id])).rows[0].status);
      expect(await preparedTexts(client)).toContain(text);
      expect(answers).toEqual(["queued", "running", "passed", "queued", "running", "passed", "queued"]);
      // Wrapping again (the pool hands the same client out again) changes nothing.
      expect(preparingStatements(client)).toBe(client);
    } finally {
      client.release(true);
    }
  });

  it("keeps at most maxPerConnection texts prepared; the others still run, unnamed", async () => {
    const client = preparingStatements(await pool.connect(), { minUses: 1, maxPerConnection: 2 });
    try {
      const texts = [1, 2, 3].map((n) => `select count(*) + ${n} as n from runs where id > $1`);
      for (const text of texts) expect((await client.query(text, [0])).rows[0].n).toMatch(/^[456]$/);
      expect(await preparedTexts(client)).toEqual(texts.slice(0, 2).sort());
    } finally {
      client.release(true);
    }
  });

  it("runs transactions whose begin and commit are prepared", async () => {
    const client = preparingStatements(await pool.connect(), { minUses: 1, maxPerConnection: 10 });
    try {
      for (const status of ["failed", "passed"]) {
        await client.query("begin", []);
        await client.query("update runs set status = $1 where id = $2", [status, 3]);
        await client.query("commit", []);
      }
      await client.query("begin", []);
      await client.query("update runs set status = $1 where id = $2", ["lost", 3]);
      await client.query("rollback", []);
      expect((await client.query("select status from runs where id = $1", [3])).rows[0].status).toBe(
        "passed",
      );
      expect(await preparedTexts(client)).toEqual(expect.arrayContaining(["begin", "commit", "rollback"]));
    } finally {
      client.release(true);
    }
  });

  it("after a migration changed a prepared statement's columns, fails that call once and sends it unnamed after", async () => {
    const client = preparingStatements(await pool.connect(), { minUses: 1, maxPerConnection: 10 });
    try {
      await client.query("create table plans (id integer primary key)", []);
      await client.query("insert into plans values ($1)", [1]);
      const text = "select * from plans where id = $1";
      expect((await client.query(text, [1])).rows).toEqual([{ id: 1 }]);
      await client.query("alter table plans add column name text default 'nightly'", []);
      await expect(client.query(text, [1])).rejects.toMatchObject({ code: "0A000" });
      expect((await client.query(text, [1])).rows).toEqual([{ id: 1, name: "nightly" }]);
    } finally {
      client.release(true);
    }
  });
});
