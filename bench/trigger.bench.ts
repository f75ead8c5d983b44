// Two latencies a CI pipeline feels, on the embedded SQLite store and on PostgreSQL, with the server alone on
// one core: (a) POST /v1/testplan/run/batch with 100 plans, against GET /v1/me on the same server; (b) GET
// /v1/executions (first page, filtered, deep, halfway) at 10k and at 1M stored executions, seeded with SQL,
// with the plans of those queries checked by EXPLAIN.
import { rm, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { CreateTestPlan } from "@testbay/client";
import Database from "better-sqlite3";
import pg from "pg";
import { encodeCursor } from "../packages/server/src/http/pagination.ts";
import { benchResult } from "./lib/bench-result.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { pinLoadGenerator } from "./lib/cpu.ts";
import { formatNumber } from "./lib/format.ts";
import { type Dialect, openTestbay, type TestbayOpening, unlimited } from "./lib/opening.ts";
import { repoRoot } from "./lib/paths.ts";
import { postgresAdminUrl, probePostgres } from "./lib/postgres.ts";
import {
  accessPath,
  type CallPlan,
  type PlanInspector,
  postgresPlans,
  sqlitePlans,
} from "./lib/query-plans.ts";
import { QuietGate } from "./lib/quiet.ts";
import {
  batchSize,
  executionId,
  postgresSeeder,
  type Seeder,
  type SeedPlan,
  type SeedProgress,
  type SeedSpec,
  type SeedVersion,
  secondsPerBatch,
  sqliteSeeder,
} from "./lib/seed-executions.ts";
import {
  SequentialClient,
  type SequentialRequest,
  type Series,
  summarize,
  timeSeries,
} from "./lib/sequential.ts";
import { median } from "./lib/stats.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import {
  type BenchResult,
  type Metric,
  type Ratio,
  type Row,
  type RunOptions,
  ratio,
  type Section,
  type Target,
} from "./lib/types.ts";

export const name = "trigger";
export const description =
  "latency of a 100-plan batch trigger (against GET /v1/me) and of GET /v1/executions at 10k vs 1M stored executions, SQLite and PostgreSQL, server on one core";

/** The batch trigger's p99 should stay under this, in ms. */
const batchTargetMs = 50;
/** A list page at 1M executions should cost about what it costs at 10k. */
const growthTarget: Target = { op: "<=", value: 1.5 };
const fixtures = path.join(repoRoot, "packages/server/test/fixtures/binaries");
const inspectStep = { type: "inspect", expect: { debuggable: false } };
const triggerPlanCount = 100;
const pageSize = 50;

const plans = {
  full: {
    trigger: { rounds: 3, batches: 70, me: 300, warmBatches: 20, warmMe: 200 },
    list: { sizes: [10_000, 1_000_000], rounds: 3, requests: 100, warm: 20, deepPages: 20 },
    seriesMaxSeconds: 120,
    quietBudgetSeconds: 60,
  },
  quick: {
    trigger: { rounds: 2, batches: 15, me: 50, warmBatches: 3, warmMe: 20 },
    list: { sizes: [10_000, 100_000], rounds: 2, requests: 20, warm: 5, deepPages: 20 },
    seriesMaxSeconds: 30,
    quietBudgetSeconds: 5,
  },
};
type Plan = typeof plans.full;
/** Other processes using more than this (% of one core) make a series wait, within the plan's budget. */
const quietThresholdPercent = 25;
/** How long QuietGate samples the machine at least, per series. */
const quietSampleSeconds = 0.5;

interface Context {
  plan: Plan;
  dir: string;
  cpu: number | undefined;
  scope: CleanupScope;
  quiet: QuietGate;
  log: (line: string) => void;
}

interface Testbay extends TestbayOpening {
  /** One keep-alive connection with the ci token: what is measured, and reads. */
  client: SequentialClient;
  databaseUrl: string;
}

interface TriggerResult {
  dialect: Dialect;
  /** Per round, in round order. */
  me: Series[];
  batch: Series[];
  executionsCreated: number;
  batchResponseBytes: number;
}

interface SeedStep {
  from: number;
  to: number;
  seeded: SeedProgress;
  /** PostgreSQL: VACUUM (ANALYZE) of both tables after the inserts, in seconds. */
  analyzeSeconds?: number;
  /** PostgreSQL: CHECKPOINT after that, so the seeding's writes are not still going on while measuring. */
  checkpointSeconds?: number;
  databaseBytes: number;
}

const queryNames = [
  "first page",
  "filtered first page",
  "filtered, nothing matches",
  "deep page (page 21)",
  "halfway page",
] as const;
type QueryName = (typeof queryNames)[number];
const controlName = "GET /v1/me (control)";
type SeriesName = QueryName | typeof controlName;

interface SizeResult {
  size: number;
  /** Per series name, per round. */
  series: Record<SeriesName, Series[]>;
  /** How each query finds its executions. */
  paths: Record<QueryName, string>;
  /** How the pages' device runs are found (one query per page). */
  devicePaths: string[];
  plans: CallPlan[];
}

interface ListResult {
  dialect: Dialect;
  seeds: SeedStep[];
  sizes: SizeResult[];
  filter: { testPlanId: string; status: string };
}

export async function run({ quick, log }: RunOptions): Promise<BenchResult> {
  const plan = quick ? plans.quick : plans.full;
  const startedAt = new Date();
  const loadAtStart = os.loadavg()[0] ?? 0;
  const scope = new CleanupScope();
  try {
    const dir = await makeTempDir(name);
    scope.defer(() => rm(dir, { recursive: true, force: true }));

    const pinning = pinLoadGenerator();
    const cpu = "serverCpu" in pinning ? pinning.serverCpu : undefined;
    if ("restore" in pinning) scope.defer(pinning.restore);
    const pinned =
      "serverCpu" in pinning
        ? `servers pinned to CPU ${pinning.serverCpu}, the client and the seeding (this process) to CPU ${pinning.loadgenCpu}, with taskset; PostgreSQL's own processes are not pinned`
        : `NOT pinned (${pinning.reason}): servers and client share the CPUs`;
    log(pinned);

    const postgres = await probePostgres();
    const postgresVersion = "version" in postgres ? postgres.version : undefined;
    const dialects: Dialect[] = "reason" in postgres ? ["sqlite"] : ["sqlite", "postgres"];
    if ("reason" in postgres) log(`WARNING: PostgreSQL skipped: ${postgres.reason}`);

    // Every series waits for quiet, and even a quiet machine costs one sample: those come on top of the budget.
    const gates =
      dialects.length *
      (plan.trigger.rounds * 2 + plan.list.sizes.length * plan.list.rounds * (queryNames.length + 1));
    const quiet = new QuietGate(
      quietThresholdPercent,
      (plan.quietBudgetSeconds + gates * quietSampleSeconds) * 1000,
      quietSampleSeconds * 1000,
    );
    const context: Context = { plan, dir, cpu, scope, quiet, log };

    const triggers: TriggerResult[] = [];
    for (const dialect of dialects) triggers.push(await inPart(context, (c) => measureTrigger(dialect, c)));
    const lists: ListResult[] = [];
    for (const dialect of dialects) lists.push(await inPart(context, (c) => measureList(dialect, c)));

    const sqliteVersion = (() => {
      const memory = new Database(":memory:");
      try {
        return (memory.prepare("select sqlite_version() as v").get() as { v: string }).v;
      } finally {
        memory.close();
      }
    })();

    const [small, large] = plan.list.sizes as [number, number];
    const ratios: Ratio[] = [];
    for (const t of triggers) {
      const batch = pooled(t.batch);
      const me = pooled(t.me);
      ratios.push(
        ratio(
          `${t.dialect}: batch p99 ÷ GET /v1/me p50 (same server)`,
          batch.p99Ms / me.p50Ms,
          undefined,
          t.batch.map((b, i) => b.p99Ms / (t.me[i]?.p50Ms ?? Number.NaN)),
        ),
        ratio(
          `${t.dialect}: batch p99 ÷ ${batchTargetMs} ms (absolute target)`,
          batch.p99Ms / batchTargetMs,
          { op: "<=", value: 1 },
          t.batch.map((b) => b.p99Ms / batchTargetMs),
        ),
      );
    }
    for (const l of lists) {
      const [at, bt] = [l.sizes[0], l.sizes[l.sizes.length - 1]];
      if (!at || !bt) continue;
      for (const query of queryNames) {
        const a = at.series[query];
        const b = bt.series[query];
        ratios.push(
          ratio(
            `${l.dialect}: ${query} p50 @${count(large)} ÷ @${count(small)}`,
            pooled(b).p50Ms / pooled(a).p50Ms,
            growthTarget,
            b.map((s, i) => s.p50Ms / (a[i]?.p50Ms ?? Number.NaN)),
          ),
        );
      }
    }

    const notes = [
      `(a) ${triggerPlanCount} active plans (devices: [], one inspect step) of com.example.basic, triggered together with POST /v1/testplan/run/batch for version 1.2.3 (app-basic.apk uploaded through the API); every response checked to be 200 (all ${triggerPlanCount} triggered). One request at a time over one keep-alive connection; ${plan.trigger.warmBatches} batches and ${plan.trigger.warmMe} GET /v1/me warm-up, then ${plan.trigger.rounds} rounds of ${plan.trigger.batches} batches and ${plan.trigger.me} GET /v1/me, order alternating (me, batch / batch, me); p50/p99 over every call of the rounds, "by round" per round. Each batch adds ${triggerPlanCount} executions and ${triggerPlanCount} device runs, so the table grows by ~${formatNumber((plan.trigger.warmBatches + plan.trigger.rounds * plan.trigger.batches) * triggerPlanCount)} executions over the run`,
      `(b) executions seeded with SQL bulk inserts (not the API) into the benchmark client's organization, in a database of their own, then grown in place from ${count(small)} to ${count(large)}: ${seedDescription}`,
      `(b) queries, each ${plan.list.requests} times per round after ${plan.list.warm} warm-up requests, ${plan.list.rounds} rounds in alternating order, one request at a time: first page GET /v1/executions?limit=${pageSize}; filtered first page ?limit=${pageSize}&test_plan_id=<one of 20 plans>&status=failed (~0.75% of rows); filtered, nothing matches: the same for the plan that never fails (an empty page: "has this plan failed?"); deep page: next_cursor followed ${plan.list.deepPages} pages in, then that page requested over and over; halfway page: the cursor of the row halfway through the table (built as the server builds cursors). GET /v1/me is timed in each round as a control for drift between the two sizes`,
      "PostgreSQL: VACUUM (ANALYZE) executions, device_runs after each seeding step (what autovacuum does after bulk inserts; it also keeps autovacuum from starting during the measurements), then CHECKPOINT (so the seeding's writes are on disk before measuring); SQLite: no ANALYZE, as the server never runs one; its WAL checkpointed (TRUNCATE) after seeding",
      ...planNotes(lists),
      pinned,
      `servers: bench/servers/testbay.ts (buildApp from TESTBAY_* variables, one ci client, token from POST /v1/oauth/token), TESTBAY_LOG_LEVEL=warn, TESTBAY_LOCAL_AGENT=false, rate limit raised so it never refuses (${unlimited}); a fresh server and database for each part and dialect; SQLite ${sqliteVersion} (embedded default, WAL)${postgresVersion ? `, PostgreSQL ${postgresVersion} at ${redact(postgresAdminUrl)}, a database created and dropped per part` : ""}`,
      `latency: from writing the request to the last byte of the response, at the client; server CPU % = CPU the server process used during the series ÷ its wall time (with PostgreSQL part of the work is in PostgreSQL's processes, not counted)`,
      `before each series the harness waited for other processes to use under ${quietThresholdPercent}% of a core (one ${quietSampleSeconds} s sample at least, then at most ${plan.quietBudgetSeconds} s more over the whole run): ${quiet.waitedSeconds.toFixed(1)} s waited in all${quiet.gaveUp > 0 ? `; ${quiet.gaveUp} series started busy once the budget was spent` : ""}`,
      ...driftWarnings(lists),
      ...("reason" in postgres ? [`WARNING: PostgreSQL skipped: ${postgres.reason}`] : []),
    ];

    return benchResult(quick, startedAt, {
      name,
      description,
      environment: {
        node: process.version,
        platform: `${process.platform} ${process.arch}`,
        cpu: `${os.cpus().length} × ${os.cpus()[0]?.model ?? "unknown"}`,
        sqlite: sqliteVersion,
        ...(postgresVersion ? { postgres: postgresVersion } : {}),
        loadAverageAtStart: Math.round(loadAtStart * 100) / 100,
      },
      detailLabel: "p50/p99 ms by round",
      rows: triggers.flatMap(triggerRows),
      sections: [
        {
          title: `GET /v1/executions at ${count(small)} and ${count(large)} stored executions (× = @${count(large)} ÷ @${count(small)})`,
          rows: lists.flatMap((l) => listRows(l, small, large)),
          detailLabel: `p50 ms by round @${count(small)} | @${count(large)}`,
        },
        { title: "seeding (SQL bulk inserts, straight into the database)", rows: lists.flatMap(seedRows) },
      ] satisfies Section[],
      ratios,
      notes,
      details: {
        plan,
        quiet: { waitedSeconds: quiet.waitedSeconds, seriesStartedBusy: quiet.gaveUp },
        trigger: triggers.map((t) => ({
          dialect: t.dialect,
          executionsCreated: t.executionsCreated,
          batchResponseBytes: t.batchResponseBytes,
          me: t.me.map(withoutTimes),
          batch: t.batch.map(withoutTimes),
          batchTimesMs: t.batch.flatMap((s) => s.times.map((ms) => Math.round(ms * 1000) / 1000)),
        })),
        list: lists.map((l) => ({
          dialect: l.dialect,
          filter: l.filter,
          seeds: l.seeds,
          sizes: l.sizes.map((s) => ({
            size: s.size,
            series: Object.fromEntries(
              Object.entries(s.series).map(([query, rounds]) => [query, rounds.map(withoutTimes)]),
            ),
            plans: s.plans,
          })),
        })),
      },
    });
  } finally {
    await scope.close();
  }
}

// ── (a) the batch trigger ───────────────────────────────────────────────────────────────────────────────

async function measureTrigger(dialect: Dialect, context: Context): Promise<TriggerResult> {
  const { plan, log } = context;
  const testbay = await startTestbay(`trigger-${dialect}`, dialect, context);
  const { ci, client, server } = testbay;
  log(`${dialect}: trigger: uploading com.example.basic 1.2.3 and creating ${triggerPlanCount} plans…`);
  await ci.apps.create({ package_name: "com.example.basic", platform: "android" });
  await uploadFixture(ci, "com.example.basic", "1.2.3", "app-basic.apk");
  const ids: string[] = [];
  for (let i = 0; i < triggerPlanCount; i++) {
    ids.push(
      await createPlan(ci, {
        name: `batch-${i}`,
        package_name: "com.example.basic",
        devices: [],
        steps: [inspectStep],
      }),
    );
  }
  const batchRequest: SequentialRequest = {
    method: "POST",
    path: "/v1/testplan/run/batch",
    body: JSON.stringify({ package_name: "com.example.basic", version: "1.2.3", test_plan_ids: ids }),
  };
  const meRequest: SequentialRequest = { path: "/v1/me" };

  const first = await client.send(batchRequest);
  const body = JSON.parse(first.body.toString("utf8")) as {
    executions?: unknown[];
    failed_executions?: unknown[];
  };
  if (
    first.status !== 200 ||
    body.executions?.length !== triggerPlanCount ||
    body.failed_executions?.length !== 0
  ) {
    throw new Error(
      `${dialect}: the first batch answered ${first.status}: ${first.body.toString().slice(0, 500)}`,
    );
  }
  let batches = 1;

  const series = (label: string, request: SequentialRequest, count: number) =>
    timeSeries(`${dialect}: ${label}`, client, () => request, {
      count,
      maxSeconds: plan.seriesMaxSeconds,
      serverPid: server.pid,
    });
  log(`${dialect}: warm-up: ${plan.trigger.warmMe} GET /v1/me, ${plan.trigger.warmBatches} batches`);
  await series("GET /v1/me warm-up", meRequest, plan.trigger.warmMe);
  batches += (await series("batch warm-up", batchRequest, plan.trigger.warmBatches)).times.length;

  const me: Series[] = [];
  const batch: Series[] = [];
  for (let round = 0; round < plan.trigger.rounds; round++) {
    const order = round % 2 === 0 ? (["me", "batch"] as const) : (["batch", "me"] as const);
    for (const which of order) {
      await waitQuiet(context, `${dialect} ${which}`);
      if (which === "me") me[round] = await series("GET /v1/me", meRequest, plan.trigger.me);
      else {
        const measured = await series("batch", batchRequest, plan.trigger.batches);
        batch[round] = measured;
        batches += measured.times.length;
      }
    }
    log(
      `${dialect}: round ${round + 1}/${plan.trigger.rounds}  batch p50 ${ms(batch[round]?.p50Ms)} p99 ${ms(batch[round]?.p99Ms)} (server CPU ${formatNumber(batch[round]?.serverCpuPercent)}%)  GET /v1/me p50 ${ms(me[round]?.p50Ms)} p99 ${ms(me[round]?.p99Ms)}`,
    );
  }
  await server.stop();
  return {
    dialect,
    me,
    batch,
    executionsCreated: batches * triggerPlanCount,
    batchResponseBytes: first.body.length,
  };
}

// ── (b) listing executions as the table grows ───────────────────────────────────────────────────────────

/**
 * 20 plans the seeded executions ran: 16 of com.example.basic, 4 of com.example.other; every 4th on 2
 * devices; plan 1 never fails.
 */
function seedPlanShapes(): Array<Omit<SeedPlan, "id">> {
  return Array.from({ length: 20 }, (_, k) => ({
    name: `nightly-${k}`,
    neverFails: k === 1,
    packageName: k < 16 ? "com.example.basic" : "com.example.other",
    devices:
      k % 4 === 0
        ? [
            { platform: "android", model: "Pixel 8", os_version: "14" },
            { platform: "android", model: "Pixel 6a", os_version: "13" },
          ]
        : [],
    steps: [inspectStep],
  }));
}

const seedDescription = `20 plans (16 of com.example.basic, 4 of com.example.other; every 4th on 2 devices, so 1.25 device runs per execution), versions 1.2.0–1.2.3 and 1.0 in eras of ${formatNumber(2500 * batchSize)} executions; executions in groups of ${batchSize} sharing created_at (as a batch trigger makes them), ~${secondsPerBatch} s apart and ending a day ago; statuses 75% passed, 15% failed, 5% errored, 5% cancelled, except that one plan never fails; varied summaries, env, started/finished times; ids ex_ + 26 zero-padded digits, in (created_at, id) order; PostgreSQL: INSERT … SELECT FROM generate_series, SQLite: INSERT … SELECT FROM a recursive CTE, in chunks of 100k rows, one transaction each`;

async function measureList(dialect: Dialect, context: Context): Promise<ListResult> {
  const { plan, log, scope } = context;
  const testbay = await startTestbay(`list-${dialect}`, dialect, context);
  const { ci, client, server } = testbay;

  log(`${dialect}: list: uploading 5 app versions and creating 20 plans…`);
  await ci.apps.create({ package_name: "com.example.basic", platform: "android" });
  await ci.apps.create({ package_name: "com.example.other", platform: "android" });
  for (const version of ["1.2.0", "1.2.1", "1.2.2", "1.2.3"]) {
    await uploadFixture(ci, "com.example.basic", version, "app-basic.apk");
  }
  await uploadFixture(ci, "com.example.other", "1.0", "app-other-package.apk");
  const seedPlans: SeedPlan[] = [];
  for (const shape of seedPlanShapes()) {
    const id = await createPlan(ci, {
      name: shape.name,
      package_name: shape.packageName,
      devices: shape.devices,
      steps: shape.steps,
    });
    seedPlans.push({ ...shape, id });
  }
  const me = await getJson<{ organization: { id: string } }>(client, "/v1/me");
  const organizationId = me.organization.id;

  // The bench's own connection to the server's database: to seed, to read positions and to EXPLAIN.
  let seeder: Seeder;
  let inspector: PlanInspector;
  let query: <T>(sql: string, parameters: unknown[]) => Promise<T[]>;
  let databaseBytes: () => Promise<number>;
  let analyze: (() => Promise<void>) | undefined;
  let checkpoint: (() => Promise<void>) | undefined;
  const versionsSql =
    "select v.id, a.package_name, v.version from app_versions v join apps a on a.id = v.app_id where a.organization_id = $1 order by a.package_name, v.version";
  const largest = Math.max(...plan.list.sizes);
  const spec = (versions: SeedVersion[]): SeedSpec => ({
    organizationId,
    clientId: server.ready.credentials.client_id,
    plans: seedPlans,
    versions,
    startSeconds: Math.floor(Date.now() / 1000) - Math.ceil(largest / batchSize) * secondsPerBatch - 86_400,
  });
  if (dialect === "sqlite") {
    const file = testbay.databaseUrl.slice("sqlite:".length);
    const sqlite = new Database(file);
    scope.defer(() => sqlite.close());
    sqlite.pragma("busy_timeout = 5000");
    sqlite.pragma("synchronous = NORMAL");
    sqlite.pragma("foreign_keys = ON");
    query = async <T>(sql: string, parameters: unknown[]) =>
      sqlite.prepare(sql.replace(/\$\d+/g, "?")).all(...parameters) as T[];
    const versions = await query<{ id: string; package_name: string; version: string }>(versionsSql, [
      organizationId,
    ]);
    seeder = sqliteSeeder(sqlite, spec(versions.map(toSeedVersion)));
    inspector = sqlitePlans(sqlite);
    databaseBytes = async () =>
      (await stat(file)).size + ((await stat(`${file}-wal`).catch(() => undefined))?.size ?? 0);
  } else {
    const connection = new pg.Client({ connectionString: testbay.databaseUrl });
    connection.on("error", () => {});
    await connection.connect();
    scope.defer(() => connection.end());
    query = async <T>(sql: string, parameters: unknown[]) =>
      (await connection.query(sql, parameters)).rows as T[];
    const versions = await query<{ id: string; package_name: string; version: string }>(versionsSql, [
      organizationId,
    ]);
    seeder = await postgresSeeder(connection, spec(versions.map(toSeedVersion)));
    const pgPlans = postgresPlans(testbay.databaseUrl);
    scope.defer(() => pgPlans.close());
    inspector = pgPlans;
    databaseBytes = async () =>
      Number(
        (await query<{ bytes: string }>("select pg_database_size(current_database()) as bytes", []))[0]
          ?.bytes,
      );
    analyze = async () => {
      await connection.query("vacuum (analyze) executions, device_runs");
    };
    checkpoint = async () => {
      await connection.query("checkpoint");
    };
  }

  const filterPlan = seedPlans[4] as SeedPlan;
  const filter = { testPlanId: filterPlan.id, status: "failed" as const };
  const stablePlan = seedPlans[1] as SeedPlan;
  const seeds: SeedStep[] = [];
  const sizes: SizeResult[] = [];
  let stored = 0;
  for (const size of plan.list.sizes) {
    log(`${dialect}: seeding executions ${formatNumber(stored)} → ${formatNumber(size)}…`);
    let lastLogged = performance.now();
    const seeded = await seeder.seed(stored, size, (p) => {
      if (performance.now() - lastLogged < 5000) return;
      lastLogged = performance.now();
      log(`${dialect}:   ${formatNumber(stored + p.executions)} executions, ${p.seconds.toFixed(1)} s`);
    });
    const timed = async (step: (() => Promise<void>) | undefined) => {
      if (!step) return undefined;
      const started = performance.now();
      await step();
      return (performance.now() - started) / 1000;
    };
    const analyzeSeconds = await timed(analyze);
    const checkpointSeconds = await timed(checkpoint);
    seeds.push({
      from: stored,
      to: size,
      seeded,
      analyzeSeconds,
      checkpointSeconds,
      databaseBytes: await databaseBytes(),
    });
    log(
      `${dialect}: seeded ${formatNumber(seeded.executions)} executions and ${formatNumber(seeded.deviceRuns)} device runs in ${seeded.seconds.toFixed(1)} s${analyzeSeconds === undefined ? "" : `, VACUUM (ANALYZE) ${analyzeSeconds.toFixed(1)} s`}${checkpointSeconds === undefined ? "" : `, CHECKPOINT ${checkpointSeconds.toFixed(1)} s`}`,
    );
    stored = size;

    // Where the deep and halfway pages start.
    let cursor: string | null = null;
    for (let page = 0; page < plan.list.deepPages; page++) {
      const response: Page = await getJson<Page>(client, listPath(cursor ? { cursor } : {}));
      cursor = response.next_cursor;
      if (!cursor) throw new Error(`${dialect}: no next_cursor on page ${page + 1} of ${formatNumber(size)}`);
    }
    const deepCursor = cursor as string;
    const halfway = Math.floor(size / 2);
    const [position] = await query<{ created_at: string; id: string }>(
      "select created_at, id from executions where id = $1",
      [executionId(halfway)],
    );
    if (!position) throw new Error(`${dialect}: execution ${executionId(halfway)} was not seeded`);
    const halfwayCursor = encodeCursor({ createdAt: position.created_at, id: position.id });

    const requests: Record<SeriesName, SequentialRequest> = {
      "first page": { path: listPath({}) },
      "filtered first page": { path: listPath({ test_plan_id: filter.testPlanId, status: filter.status }) },
      "filtered, nothing matches": { path: listPath({ test_plan_id: stablePlan.id, status: "failed" }) },
      "deep page (page 21)": { path: listPath({ cursor: deepCursor }) },
      "halfway page": { path: listPath({ cursor: halfwayCursor }) },
      [controlName]: { path: "/v1/me" },
    };
    await checkPages(dialect, client, requests, filter, halfway);

    const names: SeriesName[] = [controlName, ...queryNames];
    const series = (label: SeriesName, count: number) =>
      timeSeries(`${dialect} @${count}: ${label}`, client, () => requests[label], {
        count,
        maxSeconds: plan.seriesMaxSeconds,
        serverPid: server.pid,
      });
    for (const label of names) await series(label, plan.list.warm);
    const measured = Object.fromEntries(names.map((n) => [n, [] as Series[]])) as Record<
      SeriesName,
      Series[]
    >;
    for (let round = 0; round < plan.list.rounds; round++) {
      const order = round % 2 === 0 ? names : [...names].reverse();
      for (const label of order) {
        await waitQuiet(context, `${dialect} @${count(size)} ${label}`);
        measured[label][round] = await series(label, plan.list.requests);
      }
      log(
        `${dialect} @${count(size)}: round ${round + 1}/${plan.list.rounds}  p50 ms: ${names.map((n) => `${n} ${ms(measured[n][round]?.p50Ms)}`).join(", ")}`,
      );
    }

    const callPlans = await inspector.explain(organizationId, [
      { label: "first page", filter: {}, limit: pageSize },
      {
        label: "filtered first page",
        filter: { testPlanId: filter.testPlanId, status: filter.status },
        limit: pageSize,
      },
      {
        label: "filtered, nothing matches",
        filter: { testPlanId: stablePlan.id, status: "failed" },
        limit: pageSize,
      },
      { label: "deep page (page 21)", filter: {}, limit: pageSize, after: decodeOwnCursor(deepCursor) },
      {
        label: "halfway page",
        filter: {},
        limit: pageSize,
        after: { createdAt: position.created_at, id: position.id },
      },
    ]);
    const paths = Object.fromEntries(
      callPlans.map((p) => [p.label, p.statements[0] ? accessPath(p.statements[0]) : "?"]),
    ) as Record<QueryName, string>;
    const devicePaths = [...new Set(callPlans.flatMap((p) => p.statements.slice(1).map(accessPath)))];
    sizes.push({ size, series: measured, paths, devicePaths, plans: callPlans });
  }
  await seeder.close();
  await server.stop();
  return { dialect, seeds, sizes, filter };
}

interface Page {
  items: Array<{ id: string; test_plan_id: string; status: string; devices: unknown[] }>;
  next_cursor: string | null;
}

function listPath(query: Record<string, string>): string {
  return `/v1/executions?${new URLSearchParams({ limit: String(pageSize), ...query })}`;
}

/** The cursor format is the server's (base64url JSON of [created_at, id]); read back for EXPLAIN. */
function decodeOwnCursor(cursor: string): { createdAt: string; id: string } {
  const [createdAt, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8")) as [string, string];
  return { createdAt, id };
}

/** Every measured page answers what it should before it is timed: full pages, the right rows. */
async function checkPages(
  dialect: Dialect,
  client: SequentialClient,
  requests: Record<SeriesName, SequentialRequest>,
  filter: { testPlanId: string; status: string },
  halfway: number,
): Promise<void> {
  for (const query of queryNames) {
    const page = await getJson<Page>(client, requests[query].path);
    if (query === "filtered, nothing matches") {
      if (page.items.length !== 0 || page.next_cursor !== null) {
        throw new Error(`${dialect}: ${query} has ${page.items.length} items: the stable plan failed`);
      }
      continue;
    }
    if (page.items.length !== pageSize || !page.next_cursor) {
      throw new Error(`${dialect}: ${query} has ${page.items.length} items, next_cursor ${page.next_cursor}`);
    }
    if (page.items.some((e) => e.devices.length === 0)) {
      throw new Error(`${dialect}: ${query} lists an execution without device runs`);
    }
    if (
      query === "filtered first page" &&
      page.items.some((e) => e.test_plan_id !== filter.testPlanId || e.status !== filter.status)
    ) {
      throw new Error(`${dialect}: the filtered page lists executions the filter excludes`);
    }
    if (query === "halfway page" && page.items[0]?.id !== executionId(halfway - 1)) {
      throw new Error(
        `${dialect}: the halfway page starts at ${page.items[0]?.id}, not ${executionId(halfway - 1)}`,
      );
    }
  }
}

/**
 * Runs one part with a cleanup scope of its own, so its server, database and data dir are gone before the
 * next part starts (the runner still closes it on SIGINT/SIGTERM).
 */
async function inPart<T>(context: Context, work: (part: Context) => Promise<T>): Promise<T> {
  const scope = new CleanupScope();
  try {
    return await work({ ...context, scope });
  } finally {
    await scope.close();
  }
}

/** Waits for the machine to go quiet (within the benchmark's budget) and says so when that took a while. */
async function waitQuiet(context: Context, what: string): Promise<void> {
  const before = context.quiet.waitedSeconds;
  const gaveUp = context.quiet.gaveUp;
  await context.quiet.wait();
  const waited = context.quiet.waitedSeconds - before;
  if (context.quiet.gaveUp > gaveUp) context.log(`${what}: started busy (the quiet budget is spent)`);
  else if (waited >= 2) context.log(`${what}: waited ${waited.toFixed(1)} s for the machine to go quiet`);
}

// ── servers and API calls ───────────────────────────────────────────────────────────────────────────────

async function startTestbay(label: string, dialect: Dialect, context: Context): Promise<Testbay> {
  const { dir, cpu, scope } = context;
  const opening = await openTestbay({
    name: label,
    dir,
    scope,
    cpu,
    dialect,
    env: { TESTBAY_LOCAL_AGENT: "false" },
  });
  const client = new SequentialClient(opening.origin, { "x-api-key": opening.token });
  scope.defer(() => client.close());
  return { ...opening, client, databaseUrl: opening.databaseUrl as string };
}

/** Registers a version of an app from one of the server tests' binaries. */
async function uploadFixture(sdk: Testbay["ci"], packageName: string, version: string, fixture: string) {
  await sdk.versions.upload({ packageName, version, file: path.join(fixtures, fixture) });
}

/** Creates a test plan; its id. */
async function createPlan(sdk: Testbay["ci"], plan: Record<string, unknown>): Promise<string> {
  return (await sdk.testPlans.create(plan as unknown as CreateTestPlan)).id;
}

async function getJson<T>(client: SequentialClient, requestPath: string): Promise<T> {
  const response = await client.send({ path: requestPath });
  if (response.status !== 200) {
    throw new Error(
      `GET ${requestPath} answered ${response.status}: ${response.body.toString().slice(0, 500)}`,
    );
  }
  return JSON.parse(response.body.toString("utf8")) as T;
}

function toSeedVersion(row: { id: string; package_name: string; version: string }): SeedVersion {
  return { id: row.id, packageName: row.package_name, version: row.version };
}

// ── the report ──────────────────────────────────────────────────────────────────────────────────────────

/** The series of every round as one. */
function pooled(series: Series[]): ReturnType<typeof summarize> {
  return summarize(series.flatMap((s) => s.times));
}

function withoutTimes(series: Series): Omit<Series, "times"> & { count: number } {
  const { times, ...rest } = series;
  return { ...rest, count: times.length };
}

/** 10000 → "10k", 1000000 → "1M". */
function count(n: number): string {
  return n >= 1_000_000 ? `${n / 1_000_000}M` : n >= 1000 ? `${n / 1000}k` : String(n);
}

function ms(value: number | undefined): string {
  return value === undefined ? "—" : value.toFixed(2);
}

function triggerRows(t: TriggerResult): Row[] {
  const row = (label: string, series: Series[]): Row => {
    const all = pooled(series);
    const metrics: Metric[] = [
      { label: "calls", value: series.reduce((n, s) => n + s.times.length, 0), unit: "" },
      { label: "p50", value: all.p50Ms, unit: "ms", decimals: 2 },
      { label: "p99", value: all.p99Ms, unit: "ms", decimals: 2 },
      { label: "mean", value: all.meanMs, unit: "ms", decimals: 2 },
      { label: "max", value: all.maxMs, unit: "ms", decimals: 2 },
      {
        label: "server CPU",
        value: median(series.flatMap((s) => (s.serverCpuPercent === undefined ? [] : [s.serverCpuPercent]))),
        unit: "%",
      },
    ];
    return { label, metrics, detail: series.map((s) => `${ms(s.p50Ms)}/${ms(s.p99Ms)}`).join(" ") };
  };
  return [
    row(`${t.dialect}: GET /v1/me (baseline)`, t.me),
    row(`${t.dialect}: POST /v1/testplan/run/batch, ${triggerPlanCount} plans`, t.batch),
  ];
}

function listRows(l: ListResult, small: number, large: number): Row[] {
  const at = (size: number) => l.sizes.find((s) => s.size === size);
  const a = at(small);
  const b = at(large);
  if (!a || !b) return [];
  return ([controlName, ...queryNames] as SeriesName[]).map((query) => {
    const pa = pooled(a.series[query]);
    const pb = pooled(b.series[query]);
    const bytes = b.series[query].at(-1)?.bodyBytes ?? Number.NaN;
    return {
      label: `${l.dialect}: ${query}`,
      metrics: [
        { label: `p50 ms @${count(small)}`, value: pa.p50Ms, unit: "", decimals: 2 },
        { label: `p99 ms @${count(small)}`, value: pa.p99Ms, unit: "", decimals: 2 },
        { label: `p50 ms @${count(large)}`, value: pb.p50Ms, unit: "", decimals: 2 },
        { label: `p99 ms @${count(large)}`, value: pb.p99Ms, unit: "", decimals: 2 },
        { label: "p50 ×", value: pb.p50Ms / pa.p50Ms, unit: "", decimals: 2 },
        { label: "p99 ×", value: pb.p99Ms / pa.p99Ms, unit: "", decimals: 2 },
        { label: "body KB", value: bytes / 1024, unit: "", decimals: 1 },
      ],
      detail: `${a.series[query].map((s) => ms(s.p50Ms)).join(" ")} | ${b.series[query].map((s) => ms(s.p50Ms)).join(" ")}`,
    };
  });
}

function seedRows(l: ListResult): Row[] {
  return l.seeds.map((s) => ({
    label: `${l.dialect}: ${count(s.from)} → ${count(s.to)} executions`,
    metrics: [
      { label: "executions", value: s.seeded.executions, unit: "" },
      { label: "device runs", value: s.seeded.deviceRuns, unit: "" },
      { label: "seconds", value: s.seeded.seconds, unit: "", decimals: 1 },
      { label: "rows/s", value: (s.seeded.executions + s.seeded.deviceRuns) / s.seeded.seconds, unit: "" },
      { label: "VACUUM (ANALYZE) s", value: s.analyzeSeconds ?? Number.NaN, unit: "", decimals: 1 },
      { label: "CHECKPOINT s", value: s.checkpointSeconds ?? Number.NaN, unit: "", decimals: 1 },
      { label: "database MB", value: s.databaseBytes / 1e6, unit: "" },
    ],
  }));
}

/** What each list query's plan is (the same at both sizes, or both), and anything that would not scale. */
function planNotes(lists: ListResult[]): string[] {
  const notes: string[] = [];
  for (const l of lists) {
    const first = l.sizes[0];
    const last = l.sizes[l.sizes.length - 1];
    if (!first || !last) continue;
    const parts = queryNames.map((query) =>
      first.paths[query] === last.paths[query]
        ? `${query}: ${last.paths[query]}`
        : `${query}: @${count(first.size)} ${first.paths[query]}, @${count(last.size)} ${last.paths[query]}`,
    );
    const devices = [...new Set([...first.devicePaths, ...last.devicePaths])].join(", ");
    notes.push(
      `plans, ${l.dialect} (EXPLAIN${l.dialect === "postgres" ? " ANALYZE" : " QUERY PLAN"} of the SQL the server's ExecutionsRepo.list sends, at both sizes): ${parts.join(" | ")} | device runs of a page (execution_id in (…)): ${devices}`,
    );
    for (const call of last.plans) {
      const problems = call.statements.flatMap((s) => s.problems);
      if (problems.length > 0) {
        const index = `(organization_id, ${[...call.columns, "created_at", "id"].join(", ")})`;
        notes.push(
          `WARNING: ${l.dialect} @${count(last.size)}: ${call.label} does not find its rows by index alone: ${problems.join("; ")}. Its cost grows with the rows it reads and throws away, not with the page; an index on ${index} would find them directly`,
        );
      }
    }
  }
  return notes;
}

/** The control (GET /v1/me) should cost the same at both sizes; when it does not, the machine drifted. */
function driftWarnings(lists: ListResult[]): string[] {
  const warnings: string[] = [];
  for (const l of lists) {
    const first = l.sizes[0];
    const last = l.sizes[l.sizes.length - 1];
    if (!first || !last) continue;
    const drift = pooled(last.series[controlName]).p50Ms / pooled(first.series[controlName]).p50Ms;
    if (drift > 1.25 || drift < 1 / 1.25) {
      warnings.push(
        `WARNING: ${l.dialect}: the control GET /v1/me moved ×${drift.toFixed(2)} between the two sizes: the machine's speed changed, so read the list ratios with that in mind`,
      );
    }
  }
  return warnings;
}

/** The admin URL without a password, if it has one. */
function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}
