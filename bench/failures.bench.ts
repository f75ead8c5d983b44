// GET /v1/failures (API.md §16) over a million test cases on PostgreSQL: listing failure groups must answer
// within 200 ms at p99. The test cases are seeded with SQL (generate_series), not through the API; the
// baseline is GET /v1/apps on the same server in the same run.
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { benchResult, notRun } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { openTestbay } from "./lib/opening.ts";
import { repoRoot } from "./lib/paths.ts";
import { probePostgres } from "./lib/postgres.ts";
import { SequentialClient, type Series, timeSeries } from "./lib/sequential.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import { type BenchResult, type RunOptions, ratio } from "./lib/types.ts";

export const name = "failures";
export const description = "GET /v1/failures over 1 M test cases on PostgreSQL: p99 against GET /v1/apps";

const targetMs = 200;
const plans = 4;
/** Test cases per execution: 4,000 executions make a million. */
const testsPerExecution = 250;
/** Signatures the failures fall into (per plan, the same 400 across plans as the same bugs would be). */
const signatures = 400;
/** Failed cases per 100 (3 %): about 30,000 failures in a million cases. */
const failedPercent = 3;

const sizes = {
  full: { executions: 4000, requests: 200, warm: 20, maxSeconds: 90 },
  quick: { executions: 400, requests: 30, warm: 5, maxSeconds: 20 },
};

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const size = quick ? sizes.quick : sizes.full;
  const startedAt = new Date();
  const scope = new CleanupScope();
  try {
    const postgres = await probePostgres();
    if ("reason" in postgres) {
      return notRun(quick, startedAt, { name, description }, `PostgreSQL is needed: ${postgres.reason}`);
    }
    const dir = await makeTempDir(name);
    scope.defer(() => rm(dir, { recursive: true, force: true }));
    // A longer wait for the server to be ready than openTestbay's default: see its readyTimeoutMs.
    const opening = await openTestbay({
      name,
      dir,
      scope,
      dialect: "postgres",
      readyTimeoutMs: 180_000,
      env: { TESTBAY_LOCAL_AGENT: "false" },
    });
    const { ci } = opening;
    await ci.apps.create({ package_name: "com.example.basic", platform: "android" });
    await ci.versions.upload({
      packageName: "com.example.basic",
      version: "1.2.3",
      file: path.join(repoRoot, "packages/server/test/fixtures/binaries/app-basic.apk"),
    });
    const planIds: string[] = [];
    for (let i = 0; i < plans; i++) {
      const plan = await ci.testPlans.create({
        name: `failures-${i}`,
        package_name: "com.example.basic",
        devices: [],
        steps: [{ type: "inspect", expect: { debuggable: false } }],
      } as unknown as Parameters<typeof ci.testPlans.create>[0]);
      planIds.push(plan.id);
    }

    const db = new pg.Client({ connectionString: opening.databaseUrl });
    await db.connect();
    scope.defer(() => db.end());
    const seeded = performance.now();
    const cases = await seed(db, planIds, size.executions);
    const seedSeconds = (performance.now() - seeded) / 1000;
    log(
      `seeded ${cases.total.toLocaleString()} test cases (${cases.failed.toLocaleString()} failed) in ${seedSeconds.toFixed(1)} s`,
    );

    const client = new SequentialClient(opening.origin, { "x-api-key": opening.token });
    scope.defer(() => client.close());
    const options = { count: size.requests, maxSeconds: size.maxSeconds, serverPid: opening.server.pid };
    const requests = {
      apps: { path: "/v1/apps" },
      failures: { path: "/v1/failures" },
      plan: { path: `/v1/failures?test_plan_id=${planIds[0]}` },
      ongoing: { path: "/v1/failures?status=ongoing" },
    };
    for (const request of Object.values(requests)) {
      for (let i = 0; i < size.warm; i++) await client.send(request);
    }
    const series: Record<keyof typeof requests, Series> = {
      apps: await timeSeries("GET /v1/apps", client, () => requests.apps, options),
      failures: await timeSeries("GET /v1/failures", client, () => requests.failures, options),
      plan: await timeSeries("GET /v1/failures?test_plan_id", client, () => requests.plan, options),
      ongoing: await timeSeries("GET /v1/failures?status=ongoing", client, () => requests.ongoing, options),
    };
    const rows = Object.entries(series).map(([label, s]) => ({
      label: `${label === "apps" ? "GET /v1/apps (baseline)" : requests[label as keyof typeof requests].path}`,
      metrics: [
        { label: "requests", value: s.times.length, unit: "" },
        { label: "p50", value: s.p50Ms, unit: "ms", decimals: 1 },
        { label: "p99", value: s.p99Ms, unit: "ms", decimals: 1 },
        { label: "max", value: s.maxMs, unit: "ms", decimals: 1 },
        { label: "body", value: s.bodyBytes, unit: "B" },
      ],
    }));
    const ratios = [
      ratio(`GET /v1/failures p99 ÷ ${targetMs} ms (API.md §16)`, series.failures.p99Ms / targetMs, {
        op: "<=",
        value: 1,
      }),
      ratio(`?test_plan_id p99 ÷ ${targetMs} ms`, series.plan.p99Ms / targetMs, { op: "<=", value: 1 }),
      ratio(`?status=ongoing p99 ÷ ${targetMs} ms`, series.ongoing.p99Ms / targetMs, { op: "<=", value: 1 }),
      ratio(
        "GET /v1/failures p99 ÷ GET /v1/apps p99 (same server, same run)",
        series.failures.p99Ms / series.apps.p99Ms,
      ),
    ];
    const notes = [
      `seeded with SQL (generate_series) in ${seedSeconds.toFixed(1)} s: ${size.executions.toLocaleString()} finished executions of ${plans} plans, one device run each, ${testsPerExecution} test cases per run (${cases.total.toLocaleString()} in all), ${failedPercent} % failed (${cases.failed.toLocaleString()}) over ${signatures} signatures per plan (the same signatures in every plan), then VACUUM (ANALYZE)`,
      "one request at a time over one keep-alive connection; the first page (50 groups) of each list, with its status worked out (the fixed check reads the plans' last 3 executions); ?status=ongoing works out every group's status",
      `at most ${size.requests} requests and ${size.maxSeconds} s per series after ${size.warm} warm-up requests each; latency from writing the request to the last byte of the response`,
      `PostgreSQL ${postgres.version}; ${os.cpus().length} CPUs; load average ${(os.loadavg()[0] ?? 0).toFixed(2)} at the end (other work on the machine shows in the numbers)`,
      ...Object.entries(series)
        .filter(([, s]) => s.cutShort)
        .map(([label]) => `${label}: cut short by the time bound`),
    ];
    return benchResult(quick, startedAt, {
      name,
      description,
      environment: { node: process.version },
      rows,
      ratios,
      notes,
    });
  } finally {
    await scope.close();
  }
}

/** Seeds the executions, their device runs, test cases and failure groups in four statements; what was inserted. */
async function seed(
  db: pg.Client,
  planIds: string[],
  executions: number,
): Promise<{ total: number; failed: number }> {
  const meta = await db.query<{ organization_id: string; app_version_id: string; triggered_by: string }>(
    `select p.organization_id, v.id as app_version_id, c.id as triggered_by
     from test_plans p join apps a on a.id = p.app_id join app_versions v on v.app_id = a.id
     join clients c on c.organization_id = p.organization_id where p.id = $1 limit 1`,
    [planIds[0]],
  );
  const {
    organization_id: org,
    app_version_id: versionId,
    triggered_by: by,
  } = meta.rows[0] as (typeof meta.rows)[0];
  // Executions a minute apart, ending now: the newest are today, the oldest ~3 days ago.
  const start = Date.now() - executions * 60_000;
  const iso = (ms: string) =>
    `to_char(to_timestamp((${start} + ${ms}) / 1000.0) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
  await db.query(
    `insert into executions (id, organization_id, test_plan_id, app_version_id, package_name, version, status, plan, env,
       summary, cancel_requested, triggered_by, created_at, started_at, finished_at)
     select 'ex_bench' || lpad(i::text, 18, '0'), $1, ($2::text[])[1 + i % ${planIds.length}], $3, 'com.example.basic', '1.2.3',
       'failed', '{}', '{}', '{}', 0, $4, ${iso("i * 60000")}, ${iso("i * 60000 + 1000")}, ${iso("i * 60000 + 41000")}
     from generate_series(0, ${executions - 1}) as s(i)`,
    [org, planIds, versionId, by],
  );
  await db.query(
    `insert into device_runs (id, execution_id, position, status, attempt, created_at, organization_id)
     select 'dr_bench' || lpad(i::text, 18, '0'), 'ex_bench' || lpad(i::text, 18, '0'), 0, 'failed', 1,
       ${iso("i * 60000")}, $1
     from generate_series(0, ${executions - 1}) as s(i)`,
    [org],
  );
  // A case fails when a hash of (execution, test) falls in the first 3 of 100; its signature is one of 400.
  const hash = "((i * 2654435761 + t * 2246822519) % 4294967296)";
  const inserted = await db.query(
    `insert into test_cases (device_run_id, attempt, seq, step_index, classname, name, status, duration_ms, message,
       details, test_id, failure_signature)
     select 'dr_bench' || lpad(i::text, 18, '0'), 1, t, 0, 'com.example.basic.Test' || (t % 25), 'test' || t,
       case when failing then 'failed' else 'passed' end, 100 + t,
       case when failing then 'java.lang.AssertionError: expected:<' || t || '> but was:<' || i || '>' end,
       case when failing then 'java.lang.AssertionError: expected:<' || t || '> but was:<' || i || '>' || chr(10) ||
         '	at com.example.basic.Test' || (t % 25) || '.test' || t || '(Test.kt:' || (10 + t) || ')' end,
       't_' || lpad(to_hex((i % ${planIds.length}) * 1000 + t), 24, '0'),
       case when failing then lpad(to_hex(${hash} % ${signatures}), 24, '0') end
     from (
       select i, t, (${hash} / 7) % 100 < ${failedPercent} as failing
       from generate_series(0, ${executions - 1}) as s(i), generate_series(1, ${testsPerExecution}) as u(t)
     ) cases`,
  );
  // The groups' rows, as features/failures/failure-groups.writer.ts leaves them when the cases come in through
  // the API: per plan and signature, the count, the tests, the first execution and the latest case.
  await db.query(
    `with cases as (
       select e.organization_id, e.test_plan_id, tc.failure_signature as signature, e.package_name, e.created_at,
         e.id as execution_id, tc.device_run_id, tc.attempt, tc.seq, tc.test_id
       from test_cases tc join device_runs dr on dr.id = tc.device_run_id join executions e on e.id = dr.execution_id
       where tc.failure_signature is not null and e.organization_id = $1),
     counts as (select organization_id, test_plan_id, signature, count(*) as n,
       json_agg(distinct test_id order by test_id)::text as test_ids from cases group by 1, 2, 3),
     firsts as (select distinct on (organization_id, test_plan_id, signature) * from cases
       order by organization_id, test_plan_id, signature, created_at, execution_id),
     lasts as (select distinct on (organization_id, test_plan_id, signature) * from cases
       order by organization_id, test_plan_id, signature, created_at desc, execution_id desc, device_run_id desc,
         attempt desc, seq desc)
     insert into failure_groups (organization_id, test_plan_id, signature, package_name, occurrences, test_ids, first_at,
       first_execution_id, last_at, last_execution_id, last_device_run_id, last_attempt, last_seq)
     select c.organization_id, c.test_plan_id, c.signature, f.package_name, c.n, c.test_ids, f.created_at, f.execution_id,
       l.created_at, l.execution_id, l.device_run_id, l.attempt, l.seq
     from counts c join firsts f using (organization_id, test_plan_id, signature)
       join lasts l using (organization_id, test_plan_id, signature)`,
    [org],
  );
  await db.query("vacuum (analyze) executions, device_runs, test_cases, failure_groups");
  const failed = await db.query<{ n: string }>(
    "select count(*) as n from test_cases where failure_signature is not null",
  );
  return { total: inserted.rowCount ?? 0, failed: Number(failed.rows[0]?.n ?? 0) };
}
