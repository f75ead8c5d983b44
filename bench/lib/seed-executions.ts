// Seeds executions and their device runs straight into a Testbay database (SQLite or PostgreSQL) with SQL
// bulk inserts: a million rows through the API would take hours. Every value is a function of the row's
// number, so both databases get the same rows, and seeding rows [a, b) then [b, c) equals seeding [a, c).
import type Database from "better-sqlite3";
import type pg from "pg";

/** A test plan the seeded executions ran, as it exists in the database (created through the API). */
export interface SeedPlan {
  id: string;
  name: string;
  packageName: string;
  /** The plan's `devices`: one device run per entry, or one run with device null when empty. */
  devices: Record<string, unknown>[];
  steps: unknown[];
  /** Its runs never fail: what would have failed passed (a stable plan, to query its failures). */
  neverFails?: boolean;
}

/** An app version the seeded executions ran against (it must exist: executions reference it). */
export interface SeedVersion {
  id: string;
  packageName: string;
  version: string;
}

export interface SeedSpec {
  organizationId: string;
  /** The client that triggered them (`triggered_by`). */
  clientId: string;
  plans: SeedPlan[];
  versions: SeedVersion[];
  /** Unix seconds of execution 0; each batch of `batchSize` is `secondsPerBatch` later, give or take. */
  startSeconds: number;
}

/** Executions triggered together share `created_at`, as the ones of one batch trigger do. */
export const batchSize = 10;
/** Seconds between two batches; with a jitter of up to 200 s, so `created_at` still grows with the row. */
export const secondsPerBatch = 300;
/** Batches in one version's era: versions follow each other, one per era, over and over. */
const batchesPerVersion = 2500;
/** Rows per INSERT (and per transaction): bounds the WAL and the memory of one statement. */
const chunkRows = 100_000;

/**
 * A cheap hash of the row number to 0–65535: multiplicative hashing (the high 16 of 32 bits), a different
 * odd multiplier per use so the values are not correlated. Integer arithmetic only: identical in both.
 */
const multipliers = [2654435761, 2246822519, 3266489917, 668265263, 374761393, 3144134277, 1640531527];
const hash = (expression: string, use: number) =>
  `((${expression} * ${multipliers[use % multipliers.length]}) % 4294967296 / 65536)`;

/**
 * The rows of executions [lo, hi) as plain columns; `series` is the dialect's source of `i` from lo to hi-1.
 * Dialect specifics: how a number becomes a zero-padded id and how unix seconds and ms become ISO text.
 * Statuses of finished runs, in shares of 100: 75 passed, 15 failed, 5 errored, 5 cancelled; a plan that
 * never fails has its failures passed instead.
 */
function executionRows(
  series: string,
  planCount: number,
  pad: (n: string) => string,
  iso: (secs: string, ms: string) => string,
): string {
  const b = `(s.i / ${batchSize})`;
  const created = `(${b} * ${secondsPerBatch} + ${hash(b, 0)} % 200)`;
  const start = "cast(@start as bigint)";
  return `
    select
      'ex_' || ${pad("m.i")} as id,
      m.test_plan_id,
      m.app_version_id,
      m.package_name,
      m.version,
      m.status,
      m.plan,
      case when ${hash("m.i", 1)} % 10 = 0 then '{"FLAVOR":"release"}' else '{}' end as env,
      '{"tests":' || m.tests || ',"passed":' || (m.tests - m.failed - m.skipped) || ',"failed":' || m.failed ||
        ',"skipped":' || m.skipped || ',"flaky":' || m.flaky || '}' as summary,
      case when m.status = 'cancelled' then 1 else 0 end as cancel_requested,
      ${iso(`(${start} + m.created)`, "m.ms")} as created_at,
      ${iso(`(${start} + m.created + m.wait)`, "m.ms")} as started_at,
      ${iso(`(${start} + m.created + m.wait + m.took)`, "m.ms")} as finished_at
    from (
      select
        s.*,
        p.id as test_plan_id,
        v.id as app_version_id,
        p.package_name,
        v.version,
        p.plan_json as plan,
        case
          when s.outcome < 75 or (s.outcome < 90 and p.never_fails = 1) then 'passed'
          when s.outcome < 90 then 'failed'
          when s.outcome < 95 then 'errored'
          else 'cancelled'
        end as status,
        case when s.outcome >= 75 and s.outcome < 90 and p.never_fails = 0 then s.failed_tests else 0 end as failed
      from (
        select
          i,
          ${b} as batch,
          (i % ${batchSize}) + ${batchSize} * (${b} % 2) as plan_k,
          ${created} as created,
          ${hash(b, 2)} % 1000 as ms,
          ${hash("s.i", 3)} % 100 as outcome,
          10 + ${hash("s.i", 4)} % 90 as tests,
          1 + ${hash("s.i", 5)} % 5 as failed_tests,
          ${hash("s.i", 6)} % 3 as skipped,
          case when ${hash("s.i", 5)} % 7 = 0 then 1 else 0 end as flaky,
          5 + ${hash("s.i", 6)} % 120 as wait,
          30 + ${hash("s.i", 2)} % 900 as took
        from ${series}
      ) s
      join bench_seed_plans p on p.k = s.plan_k % ${planCount}
      join bench_seed_versions v on v.package_name = p.package_name
        and v.k = (s.batch / ${batchesPerVersion}) % p.versions
    ) m`;
}

/** Device runs of the executions with ids in [lo, hi): one per device of the plan, or one with device null. */
const deviceRunRows = (pad: (n: string) => string) => `
    select
      'dr_' || ${pad("(cast(substr(e.id, 4) as bigint) * 2 + d.position)")} as id,
      e.id as execution_id,
      d.position,
      case when d.position = 0 then p.device0 else p.device1 end as device,
      e.status,
      case when e.status = 'errored' then 2 else 1 end as attempt,
      e.created_at,
      e.started_at,
      e.finished_at
    from executions e
    join bench_seed_plans p on p.id = e.test_plan_id
    join bench_seed_positions d on d.position < p.runs
    where e.id >= @loId and e.id < @hiId`;

const executionColumns =
  "id, organization_id, test_plan_id, app_version_id, package_name, version, status, plan, env, summary, cancel_requested, triggered_by, created_at, started_at, finished_at";
const deviceRunColumns =
  "id, execution_id, position, device, status, attempt, created_at, started_at, finished_at";

/** The plan as a trigger snapshots it into `executions.plan`. */
function planSnapshot(plan: SeedPlan): string {
  return JSON.stringify({
    name: plan.name,
    devices: plan.devices,
    steps: plan.steps,
    timeout_seconds: 1800,
    max_attempts: 1,
  });
}

function lookupRows(spec: SeedSpec) {
  const plans = spec.plans.map((plan, k) => ({
    k,
    id: plan.id,
    package_name: plan.packageName,
    plan_json: planSnapshot(plan),
    runs: Math.max(1, plan.devices.length),
    device0: plan.devices[0] ? JSON.stringify(plan.devices[0]) : null,
    device1: plan.devices[1] ? JSON.stringify(plan.devices[1]) : null,
    versions: spec.versions.filter((v) => v.packageName === plan.packageName).length,
    never_fails: plan.neverFails ? 1 : 0,
  }));
  if (plans.some((p) => p.versions === 0)) throw new Error("every seeded plan's app needs a version");
  if (spec.plans.some((p) => p.devices.length > 2)) throw new Error("seeded plans have at most 2 devices");
  const counters = new Map<string, number>();
  const versions = spec.versions.map((v) => {
    const k = counters.get(v.packageName) ?? 0;
    counters.set(v.packageName, k + 1);
    return { package_name: v.packageName, k, id: v.id, version: v.version };
  });
  return { plans, versions };
}

export const executionId = (i: number) => `ex_${String(i).padStart(26, "0")}`;

export interface SeedProgress {
  /** Executions inserted so far in this call. */
  executions: number;
  deviceRuns: number;
  seconds: number;
}

export interface Seeder {
  /** Inserts executions [from, to) and their device runs, in chunks, each chunk one transaction. */
  seed(from: number, to: number, progress?: (p: SeedProgress) => void): Promise<SeedProgress>;
  close(): Promise<void>;
}

function chunks(from: number, to: number): Array<[number, number]> {
  const out: Array<[number, number]> = [];
  for (let lo = from; lo < to; lo += chunkRows) out.push([lo, Math.min(to, lo + chunkRows)]);
  return out;
}

/** A seeder on its own connection to the server's SQLite file (WAL: the running server sees the rows). */
export function sqliteSeeder(sqlite: Database.Database, spec: SeedSpec): Seeder {
  const { plans, versions } = lookupRows(spec);
  sqlite.exec(`
    create temp table bench_seed_plans (k integer primary key, id text not null unique, package_name text not null,
      plan_json text not null, runs integer not null, device0 text, device1 text, versions integer not null,
      never_fails integer not null);
    create temp table bench_seed_versions (package_name text not null, k integer not null, id text not null,
      version text not null, primary key (package_name, k));
    create temp table bench_seed_positions (position integer primary key);
    insert into bench_seed_positions values (0), (1);`);
  const insertPlan = sqlite.prepare(
    "insert into bench_seed_plans values (@k, @id, @package_name, @plan_json, @runs, @device0, @device1, @versions, @never_fails)",
  );
  const insertVersion = sqlite.prepare(
    "insert into bench_seed_versions values (@package_name, @k, @id, @version)",
  );
  for (const plan of plans) insertPlan.run(plan);
  for (const version of versions) insertVersion.run(version);

  const pad = (n: string) => `printf('%026d', ${n})`;
  const iso = (secs: string, ms: string) =>
    `strftime('%Y-%m-%dT%H:%M:%S', ${secs}, 'unixepoch') || '.' || printf('%03d', ${ms}) || 'Z'`;
  const series =
    "(with recursive r(i) as (select cast(@lo as integer) union all select i + 1 from r where i + 1 < @hi) select i from r) s";
  const executions = sqlite.prepare(
    `insert into executions (${executionColumns})
     select id, @org, test_plan_id, app_version_id, package_name, version, status, plan, env, summary,
       cancel_requested, @client, created_at, started_at, finished_at
     from (${executionRows(series, plans.length, pad, iso)}) order by id`,
  );
  const deviceRuns = sqlite.prepare(
    `insert into device_runs (${deviceRunColumns}) select * from (${deviceRunRows(pad)}) order by id`,
  );
  return {
    async seed(from, to, progress) {
      const started = performance.now();
      const done: SeedProgress = { executions: 0, deviceRuns: 0, seconds: 0 };
      for (const [lo, hi] of chunks(from, to)) {
        sqlite
          .transaction(() => {
            done.executions += executions.run({
              lo,
              hi,
              org: spec.organizationId,
              client: spec.clientId,
              start: spec.startSeconds,
            }).changes;
            done.deviceRuns += deviceRuns.run({ loId: executionId(lo), hiId: executionId(hi) }).changes;
          })
          .immediate();
        done.seconds = (performance.now() - started) / 1000;
        progress?.(done);
        // Let the event loop breathe between chunks (a signal handler, a child's message).
        await new Promise((resolve) => setImmediate(resolve));
      }
      // Fold the WAL into the database file, as the server's own checkpoints would have done by now.
      sqlite.pragma("wal_checkpoint(TRUNCATE)");
      done.seconds = (performance.now() - started) / 1000;
      return done;
    },
    async close() {
      sqlite.exec(
        "drop table temp.bench_seed_plans; drop table temp.bench_seed_versions; drop table temp.bench_seed_positions",
      );
    },
  };
}

/** `@name` → `$n` for pg, numbered in order of first appearance (SQLite takes `@name` as it is). */
function numbered(text: string, names: string[]): string {
  return text.replace(/@([a-zA-Z]+)/g, (_match, name: string) => {
    let index = names.indexOf(name);
    if (index < 0) index = names.push(name) - 1;
    return `$${index + 1}`;
  });
}

/** A seeder on one PostgreSQL connection (its temp tables live as long as the connection). */
export async function postgresSeeder(client: pg.Client, spec: SeedSpec): Promise<Seeder> {
  const { plans, versions } = lookupRows(spec);
  await client.query(`
    create temp table bench_seed_plans (k integer primary key, id text not null unique, package_name text not null,
      plan_json text not null, runs integer not null, device0 text, device1 text, versions integer not null,
      never_fails integer not null);
    create temp table bench_seed_versions (package_name text not null, k integer not null, id text not null,
      version text not null, primary key (package_name, k));
    create temp table bench_seed_positions (position integer primary key);
    insert into bench_seed_positions values (0), (1);`);
  for (const p of plans) {
    await client.query("insert into bench_seed_plans values ($1, $2, $3, $4, $5, $6, $7, $8, $9)", [
      p.k,
      p.id,
      p.package_name,
      p.plan_json,
      p.runs,
      p.device0,
      p.device1,
      p.versions,
      p.never_fails,
    ]);
  }
  for (const v of versions) {
    await client.query("insert into bench_seed_versions values ($1, $2, $3, $4)", [
      v.package_name,
      v.k,
      v.id,
      v.version,
    ]);
  }

  const pad = (n: string) => `lpad((${n})::text, 26, '0')`;
  const iso = (secs: string, ms: string) =>
    `to_char(timestamp '1970-01-01' + ${secs} * interval '1 second', 'YYYY-MM-DD"T"HH24:MI:SS') || '.' || lpad((${ms})::text, 3, '0') || 'Z'`;
  const series = "generate_series(cast(@lo as bigint), cast(@hi as bigint) - 1) as s(i)";
  const executionNames: string[] = [];
  const executions = numbered(
    `insert into executions (${executionColumns})
     select id, @org, test_plan_id, app_version_id, package_name, version, status, plan, env, summary,
       cancel_requested, @client, created_at, started_at, finished_at
     from (${executionRows(series, plans.length, pad, iso)}) rows order by id`,
    executionNames,
  );
  const deviceRunNames: string[] = [];
  const deviceRuns = numbered(
    `insert into device_runs (${deviceRunColumns}) select * from (${deviceRunRows(pad)}) rows order by id`,
    deviceRunNames,
  );
  const values = (names: string[], given: Record<string, unknown>) => names.map((n) => given[n]);
  return {
    async seed(from, to, progress) {
      const started = performance.now();
      const done: SeedProgress = { executions: 0, deviceRuns: 0, seconds: 0 };
      for (const [lo, hi] of chunks(from, to)) {
        await client.query("begin");
        try {
          const e = await client.query(
            executions,
            values(executionNames, {
              lo,
              hi,
              org: spec.organizationId,
              client: spec.clientId,
              start: spec.startSeconds,
            }),
          );
          const d = await client.query(
            deviceRuns,
            values(deviceRunNames, { loId: executionId(lo), hiId: executionId(hi) }),
          );
          await client.query("commit");
          done.executions += e.rowCount ?? 0;
          done.deviceRuns += d.rowCount ?? 0;
        } catch (error) {
          await client.query("rollback");
          throw error;
        }
        done.seconds = (performance.now() - started) / 1000;
        progress?.(done);
      }
      return done;
    },
    async close() {
      await client.query("drop table if exists bench_seed_plans, bench_seed_versions, bench_seed_positions");
    },
  };
}
