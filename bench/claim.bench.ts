// How fast agents drain the queue, on the embedded SQLite store and on PostgreSQL, with the server alone on
// one core: 8 agents claim (wait_seconds 0) and complete as passed 10,000 queued device runs until a claim
// answers 204, against GET /v1/me called by the same 8 connections at once on the same server. Every
// device run handed out is recorded: a run handed out twice is a duplicate claim (there must be none).
import { execFile } from "node:child_process";
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import Database from "better-sqlite3";
import pg from "pg";
import { benchResult } from "./lib/bench-result.ts";
import {
  type ConcurrentSeries,
  type CpuWindow,
  concurrentSeries,
  type DatabasePids,
  type Drain,
  drainQueue,
  mergeSeries,
} from "./lib/claim-load.ts";
import {
  type ClaimPlan,
  type ClaimPlanInspector,
  type ClaimStatement,
  claimAccessPath,
  planBuffers,
  postgresClaimPlans,
  sqliteClaimPlans,
} from "./lib/claim-plan.ts";
import { statementCount, statementCounter } from "./lib/claim-statements.ts";
import { compareSets, countDuplicates, type HandedOut, headAndTail, perSecond } from "./lib/claim-stats.ts";
import { CleanupScope } from "./lib/cleanup.ts";
import { pinLoadGenerator } from "./lib/cpu.ts";
import { formatNumber } from "./lib/format.ts";
import { type Dialect, openTestbay, sdkFor, type TestbayOpening, unlimited } from "./lib/opening.ts";
import { repoRoot } from "./lib/paths.ts";
import { postgresAdminUrl, probePostgres } from "./lib/postgres.ts";
import { QuietGate } from "./lib/quiet.ts";
import { SequentialClient, summarize } from "./lib/sequential.ts";
import { median } from "./lib/stats.ts";
import { makeTempDir } from "./lib/temp-dir.ts";
import { type BenchResult, type Ratio, type Row, type RunOptions, ratio, type Section } from "./lib/types.ts";

export const name = "claim";
export const description =
  "claims/s and claim latency of 8 agents draining 10k queued device runs (against GET /v1/me at the same concurrency), duplicate claims, SQLite and PostgreSQL, server on one core";

const fixtures = path.join(repoRoot, "packages/server/test/fixtures/binaries");
const cliEntry = path.join(repoRoot, "packages/server/bin/testbay-server.js");
const packageName = "com.example.basic";
const inspectStep = { type: "inspect", expect: { debuggable: false } } as const;
/** Plans per batch trigger: the API's maximum. */
const batchPlans = 100;
/** Issue 15's targets for PostgreSQL: claim p99 (ms) and statements per claim + complete cycle. */
const postgresClaimP99TargetMs = 20;
const postgresStatementsTarget = 8;
/** The share of a drain's first and last claims compared, to see whether claims slow with a fuller queue. */
const headFraction = 0.1;

const plans = {
  full: {
    runs: 10_000,
    rounds: 3,
    agents: 8,
    mePerAgent: 1000,
    warmMePerAgent: 50,
    warmRuns: 200,
    drainMaxSeconds: 600,
    seriesMaxSeconds: 120,
    quietBudgetSeconds: 60,
  },
  quick: {
    runs: 1_000,
    rounds: 1,
    agents: 8,
    mePerAgent: 100,
    warmMePerAgent: 20,
    warmRuns: 100,
    drainMaxSeconds: 120,
    seriesMaxSeconds: 30,
    quietBudgetSeconds: 5,
  },
};
type Plan = typeof plans.full;
/** Other processes using more than this (% of one core) make a phase wait, within the plan's budget. */
const quietThresholdPercent = 25;
/** How long QuietGate samples the machine at least, per phase. */
const quietSampleSeconds = 0.5;

interface Context {
  plan: Plan;
  dir: string;
  cpu: number | undefined;
  scope: CleanupScope;
  quiet: QuietGate;
  log: (line: string) => void;
}

interface RoundResult {
  round: number;
  version: string;
  queued: number;
  /** Seconds the 100-plan batch triggers took to queue the runs. */
  seedSeconds: number;
  /** The baseline before and after the drain, together. */
  me: ConcurrentSeries;
  /** GET /v1/me p50 just before and just after the drain, ms. */
  meP50BeforeAfter: [number, number];
  drain: Drain;
  handedOut: HandedOut;
  /** Triggered executions no claim handed out, and claimed executions this round did not trigger. */
  missing: number;
  unexpected: number;
  /** Executions of this round's version listed as passed after the drain (GET /v1/executions). */
  passed: number;
  /** Executions of any version still queued or running after the drain (first page of each). */
  leftOver: number;
  /** Statements the server sent to its database during the drain (claim-statement-counter.mjs). */
  statements: number;
}

interface DialectResult {
  dialect: Dialect;
  rounds: RoundResult[];
  plan: ClaimPlan | undefined;
  /** The same SELECT after the last drain, the queue empty again. */
  planAfter: ClaimPlan | undefined;
  agentRateLimitPolicy: string;
  warm: { runs: number; duplicates: number };
  agents: number;
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
        ? `servers pinned to CPU ${pinning.serverCpu}, the agents and the seeding (this process) to CPU ${pinning.loadgenCpu}, with taskset; PostgreSQL's own processes are not pinned`
        : `NOT pinned (${pinning.reason}): servers and agents share the CPUs`;
    log(pinned);

    const postgres = await probePostgres();
    const postgresVersion = "version" in postgres ? postgres.version : undefined;
    const dialects: Dialect[] = "reason" in postgres ? ["sqlite"] : ["sqlite", "postgres"];
    if ("reason" in postgres) log(`WARNING: PostgreSQL skipped: ${postgres.reason}`);

    // Every phase waits for quiet, and even a quiet machine costs one sample: those come on top of the budget.
    const gates = dialects.length * plan.rounds * 3;
    const quiet = new QuietGate(
      quietThresholdPercent,
      (plan.quietBudgetSeconds + gates * quietSampleSeconds) * 1000,
      quietSampleSeconds * 1000,
    );
    const context: Context = { plan, dir, cpu, scope, quiet, log };

    const results: DialectResult[] = [];
    for (const dialect of dialects) results.push(await inPart(context, (c) => measure(dialect, c)));

    const sqliteVersion = (() => {
      const memory = new Database(":memory:");
      try {
        return (memory.prepare("select sqlite_version() as v").get() as { v: string }).v;
      } finally {
        memory.close();
      }
    })();

    const ratios: Ratio[] = [];
    for (const r of results) {
      const claims = summarize(r.rounds.flatMap((x) => x.drain.claimed.map((c) => c.claimMs)));
      const me = summarize(r.rounds.flatMap((x) => x.me.times));
      ratios.push(
        ratio(
          `${r.dialect}: claim p50 ÷ GET /v1/me p50 (8 at once, same server)`,
          claims.p50Ms / me.p50Ms,
          undefined,
          r.rounds.map((x) => roundStats(x).claim.p50Ms / roundStats(x).me.p50Ms),
        ),
        ratio(
          `${r.dialect}: claim p99 ÷ GET /v1/me p99`,
          claims.p99Ms / me.p99Ms,
          undefined,
          r.rounds.map((x) => roundStats(x).claim.p99Ms / roundStats(x).me.p99Ms),
        ),
        ratio(
          `${r.dialect}: claims/s ÷ GET /v1/me req/s (a claim cycle is 2 requests)`,
          median(r.rounds.map(claimsPerSecond)) / median(r.rounds.map(mePerSecond)),
          undefined,
          r.rounds.map((x) => claimsPerSecond(x) / mePerSecond(x)),
        ),
        ratio(
          `${r.dialect}: claim p99, ms (a time${r.dialect === "postgres" ? `, issue 15's target ≤ ${postgresClaimP99TargetMs}` : ""})`,
          claims.p99Ms,
          r.dialect === "postgres" ? { op: "<=", value: postgresClaimP99TargetMs } : undefined,
          r.rounds.map((x) => roundStats(x).claim.p99Ms),
        ),
        ratio(
          `${r.dialect}: statements per claim + complete cycle (a count${r.dialect === "postgres" ? `, target ≤ ${postgresStatementsTarget}` : ""})`,
          r.rounds.reduce((n, x) => n + x.statements, 0) /
            r.rounds.reduce((n, x) => n + x.drain.claimed.length, 0),
          r.dialect === "postgres" ? { op: "<=", value: postgresStatementsTarget } : undefined,
          r.rounds.map(statementsPerCycle),
        ),
        ...(r.dialect === "postgres"
          ? [
              ratio(
                "postgres: PostgreSQL CPU per claim + complete cycle, ms (steadier than latency on a busy machine)",
                median(r.rounds.map(databaseCpuMsPerCycle)),
                undefined,
                r.rounds.map(databaseCpuMsPerCycle),
              ),
            ]
          : []),
        ratio(
          `${r.dialect}: duplicate claims (a count, must be 0)`,
          r.rounds.reduce((n, x) => n + x.handedOut.duplicates, 0) + r.warm.duplicates,
          { op: "<=", value: 0 },
          r.rounds.map((x) => x.handedOut.duplicates),
        ),
        ratio(
          `${r.dialect}: queued runs not passed after the drain (a count, must be 0)`,
          r.rounds.reduce((n, x) => n + notPassed(x), 0),
          { op: "<=", value: 0 },
          r.rounds.map(notPassed),
        ),
      );
    }
    const sqlite = results.find((r) => r.dialect === "sqlite");
    const pgResult = results.find((r) => r.dialect === "postgres");
    if (sqlite && pgResult && sqlite.rounds.length === pgResult.rounds.length) {
      ratios.push(
        ratio(
          "postgres ÷ sqlite, claims/s",
          median(pgResult.rounds.map(claimsPerSecond)) / median(sqlite.rounds.map(claimsPerSecond)),
          undefined,
          pgResult.rounds.map(
            (x, i) => claimsPerSecond(x) / claimsPerSecond(sqlite.rounds[i] as RoundResult),
          ),
        ),
      );
    }

    const notes = [
      `per database: a fresh server and database; ${batchPlans} active plans of ${packageName} (devices: [], one inspect step); per round a new version (app-basic.apk uploaded through the API, 1.0.<round>) and ${formatNumber(plan.runs)} device runs queued by ${plan.runs / batchPlans} POST /v1/testplan/run/batch of the ${batchPlans} plans (every answer checked: 200, ${batchPlans} executions); the runs of earlier rounds stay in the tables, passed`,
      `agents: ${plan.agents} loops in this process, each its own keep-alive connection and agent_id, all with one agent client (created with testbay-server client create --role agent, as an operator would; one token); each claims with {devices: [], host: true, step_types: ["inspect"], wait_seconds: 0} and completes with {status: "passed"} until a claim answers 204; bounded by ${plan.runs} + 1 claims per agent and ${plan.drainMaxSeconds} s per drain`,
      `baseline: GET /v1/me over the same ${plan.agents} connections with the same agent token, ${plan.agents} at once, ${plan.mePerAgent} each just before and again just after each drain (${formatNumber(2 * plan.agents * plan.mePerAgent)} per round, taken together); warm-up before the first round: ${plan.warmMePerAgent} each, and a drain of ${plan.warmRuns} runs (not measured, checked for duplicates); ${plan.rounds} round(s) of me, drain, me`,
      `claim latency: each 200 claim, from writing the request to the last byte of the response, at the agent (the 204s that end a drain are left out: ${results.map((r) => `${r.dialect} ${r.rounds.map((x) => x.drain.empty).join("/")}`).join(", ")}); p50/p99 over every claim of every round; claims/s = 200 claims ÷ wall time from the first claim to the last agent's 204 (median of the rounds); first/last ${headFraction * 100}% = the claims answered first (queue nearly full) and last (queue nearly empty)`,
      `statements per cycle: every statement the server process sent to its database during the drain (counted where it leaves the process by bench/lib/claim-statement-counter.mjs, preloaded into the benchmark's server only: each pg Client#query, each SQLite statement run, BEGIN and COMMIT included, and whatever else ran meanwhile: auth lookups, agents' last-seen upserts, pg_notify, the lease sweeper) ÷ the jobs handed out`,
      `checked after every drain: every device run id handed out once (duplicates = handed out − distinct), every triggered execution claimed and none other, GET /v1/executions?status=passed&version=<round's> counts them all, and nothing queued or running is left (GET /v1/executions?status=queued|running)`,
      ...results.flatMap(planNotes),
      pinned,
      `servers: bench/servers/testbay.ts (buildApp from TESTBAY_* variables; one ci client to seed and check), TESTBAY_LOG_LEVEL=warn, TESTBAY_LOCAL_AGENT=false (no in-process agent competes for claims), TESTBAY_LEASE_TTL_SECONDS default (60); rate limits raised so they never refuse: TESTBAY_RATE_LIMIT_BURST=TESTBAY_RATE_LIMIT_PER_SECOND=TESTBAY_AGENT_RATE_LIMIT_BURST=TESTBAY_AGENT_RATE_LIMIT_PER_SECOND=${unlimited}; the limiter still runs on every request (the agent's RateLimit-Policy header was checked: ${results.map((r) => `${r.dialect} ${r.agentRateLimitPolicy}`).join(", ")}); SQLite ${sqliteVersion} (embedded default, WAL)${postgresVersion ? `, PostgreSQL ${postgresVersion} at ${redact(postgresAdminUrl)}, a scratch database created and dropped` : ""}`,
      "CPU columns: % of one core over each phase (median of the rounds); server = the server process (pinned to one core; with SQLite the database work is in it); client = this process (the agents); db = PostgreSQL's backends connected to the benchmark's database (pids from pg_stat_activity, CPU from /proc; not pinned); other = every other process on the machine: noise from outside the benchmark",
      `before each phase the harness waited for other processes to use under ${quietThresholdPercent}% of a core (one ${quietSampleSeconds} s sample at least, then at most ${plan.quietBudgetSeconds} s more over the whole run): ${quiet.waitedSeconds.toFixed(1)} s waited in all${quiet.gaveUp > 0 ? `; ${quiet.gaveUp} phases started busy once the budget was spent` : ""}`,
      ...warnings(results),
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
      rows: results.flatMap(mainRows),
      sections: [
        {
          title: `each drain (${formatNumber(plan.runs)} queued runs, ${plan.agents} agents)`,
          rows: results.flatMap(drainRows),
          detailLabel: "claims/s by agent",
        },
      ] satisfies Section[],
      ratios,
      notes,
      details: {
        plan,
        quiet: { waitedSeconds: quiet.waitedSeconds, phasesStartedBusy: quiet.gaveUp },
        results: results.map((r) => ({
          dialect: r.dialect,
          agentRateLimitPolicy: r.agentRateLimitPolicy,
          warm: r.warm,
          claimPlan: r.plan,
          claimPlanAfterLastDrain: r.planAfter,
          rounds: r.rounds.map((x) => {
            const s = roundStats(x);
            return {
              round: x.round,
              version: x.version,
              queued: x.queued,
              seedSeconds: x.seedSeconds,
              me: {
                requests: x.me.times.length,
                ms: x.me.ms,
                cpu: x.me.cpu,
                cutShort: x.me.cutShort,
                p50BeforeAfter: x.meP50BeforeAfter,
                ...s.me,
              },
              drain: {
                claims: x.drain.claimed.length,
                empty: x.drain.empty,
                emptyMs: x.drain.emptyMs,
                ms: x.drain.ms,
                cpu: x.drain.cpu,
                cutShort: x.drain.cutShort,
                jobBytes: x.drain.jobBytes,
                oddCompletions: x.drain.oddCompletions,
                claim: s.claim,
                complete: s.complete,
                headAndTail: headAndTail(
                  x.drain.claimed.map((c) => c.claimMs),
                  headFraction,
                ),
                claimsByAgent: byAgent(x, plan.agents),
              },
              handedOut: x.handedOut,
              missing: x.missing,
              unexpected: x.unexpected,
              passed: x.passed,
              leftOver: x.leftOver,
            };
          }),
        })),
      },
    });
  } finally {
    await scope.close();
  }
}

// ── one database ────────────────────────────────────────────────────────────────────────────────────────

async function measure(dialect: Dialect, context: Context): Promise<DialectResult> {
  const { plan, log, scope } = context;
  const testbay = await startTestbay(`claim-${dialect}`, dialect, context);
  const { origin, ci, sdk, server } = testbay;

  log(`${dialect}: creating an agent client (testbay-server client create --role agent)…`);
  const agentCredentials = await createAgentClient(testbay);
  const agentToken = await sdkFor(origin, server.ready, agentCredentials).accessToken();
  const agentRateLimitPolicy = await checkAgent(origin, agentToken);
  const agents = Array.from(
    { length: plan.agents },
    () => new SequentialClient(origin, { "x-api-key": agentToken }),
  );
  scope.defer(() => {
    for (const agent of agents) agent.close();
  });

  log(`${dialect}: creating ${packageName} and ${batchPlans} plans…`);
  await sdk.apps.create({ package_name: packageName, platform: "android" });
  const planIds: string[] = [];
  for (let i = 0; i < batchPlans; i++) {
    planIds.push(
      (
        await sdk.testPlans.create({
          name: `claim-${i}`,
          package_name: packageName,
          devices: [],
          steps: [inspectStep],
        })
      ).id,
    );
  }
  const me = await getJson<{ organization: { id: string } }>(ci, "/v1/me");

  // The claim's SELECT, captured while nothing is queued (so capturing claims nothing).
  const inspector: ClaimPlanInspector =
    dialect === "sqlite"
      ? sqliteClaimPlans(testbay.databaseUrl.slice("sqlite:".length))
      : postgresClaimPlans(testbay.databaseUrl);
  scope.defer(() => inspector.close());
  const statement: ClaimStatement = await inspector.capture(me.organization.id);

  // PostgreSQL's backends serving this database, for their CPU: a connection of the benchmark's own.
  let databasePids: DatabasePids | undefined;
  if (dialect === "postgres") {
    const connection = new pg.Client({ connectionString: testbay.databaseUrl });
    connection.on("error", () => {});
    await connection.connect();
    scope.defer(() => connection.end());
    databasePids = async () =>
      (
        await connection.query<{ pid: number }>(
          "select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()",
        )
      ).rows.map((row) => row.pid);
  }

  const queue = async (version: string, runs: number) => {
    await sdk.versions.upload({ packageName, version, file: path.join(fixtures, "app-basic.apk") });
    const started = performance.now();
    const ids: string[] = [];
    for (let b = 0; b < Math.ceil(runs / batchPlans); b++) {
      const plansNow = planIds.slice(0, Math.min(batchPlans, runs - b * batchPlans));
      const response = await ci.send({
        method: "POST",
        path: "/v1/testplan/run/batch",
        body: JSON.stringify({ package_name: packageName, version, test_plan_ids: plansNow }),
      });
      const body = JSON.parse(response.body.toString("utf8")) as {
        executions?: Array<{ id: string; devices?: unknown[] }>;
        failed_executions?: unknown[];
      };
      if (
        response.status !== 200 ||
        body.executions?.length !== plansNow.length ||
        body.failed_executions?.length !== 0
      ) {
        throw new Error(
          `${dialect}: batch trigger ${b + 1} answered ${response.status}: ${response.body.toString().slice(0, 500)}`,
        );
      }
      for (const execution of body.executions) ids.push(execution.id);
    }
    return { ids, seconds: (performance.now() - started) / 1000 };
  };
  const drain = (label: string, runs: number) =>
    drainQueue(`${dialect}: ${label}`, agents, {
      agentPrefix: `bench-agent-${dialect}`,
      maxClaimsPerAgent: runs + 1,
      maxSeconds: plan.drainMaxSeconds,
      serverPid: server.pid,
      databasePids,
    });
  const meSeries = (label: string, perAgent: number) =>
    concurrentSeries(
      `${dialect}: ${label}`,
      agents,
      { path: "/v1/me" },
      {
        perClient: perAgent,
        maxSeconds: plan.seriesMaxSeconds,
        serverPid: server.pid,
        databasePids,
      },
    );

  log(
    `${dialect}: warm-up: ${plan.agents} × ${plan.warmMePerAgent} GET /v1/me, a drain of ${plan.warmRuns} runs`,
  );
  await meSeries("GET /v1/me warm-up", plan.warmMePerAgent);
  const warmQueued = await queue("0.9.0", plan.warmRuns);
  const warmDrain = await drain("warm-up drain", plan.warmRuns);
  if (warmDrain.cutShort) throw new Error(`${dialect}: the warm-up drain did not end`);
  const warm = {
    runs: warmQueued.ids.length,
    duplicates: countDuplicates(warmDrain.claimed.map((c) => c.deviceRunId)).duplicates,
  };

  const rounds: RoundResult[] = [];
  let claimPlan: ClaimPlan | undefined;
  for (let round = 0; round < plan.rounds; round++) {
    const version = `1.0.${round}`;
    log(
      `${dialect}: round ${round + 1}/${plan.rounds}: queueing ${formatNumber(plan.runs)} runs of ${version}…`,
    );
    const queued = await queue(version, plan.runs);
    if (!claimPlan) claimPlan = await inspector.explain(statement);

    // The baseline brackets the drain: once just before it, once just after, so drift during the (long)
    // drain falls on the baseline too.
    await waitQuiet(context, `${dialect} round ${round + 1} GET /v1/me before`);
    const meBefore = await meSeries("GET /v1/me", plan.mePerAgent);
    await waitQuiet(context, `${dialect} round ${round + 1} drain`);
    const statementsBefore = await statementCount(server.pid, testbay.statementFile);
    const drained = await drain(`drain ${round + 1}`, plan.runs);
    const statements = (await statementCount(server.pid, testbay.statementFile)) - statementsBefore;
    await waitQuiet(context, `${dialect} round ${round + 1} GET /v1/me after`);
    const meAfter = await meSeries("GET /v1/me", plan.mePerAgent);
    const meResult = mergeSeries(meBefore, meAfter);
    if (drained.cutShort) {
      throw new Error(
        `${dialect}: round ${round + 1}: the drain did not end within ${plan.drainMaxSeconds} s (${formatNumber(drained.claimed.length)} of ${formatNumber(plan.runs)} claimed)`,
      );
    }

    const handedOut = countDuplicates(drained.claimed.map((c) => c.deviceRunId));
    const sets = compareSets(
      queued.ids,
      drained.claimed.map((c) => c.executionId),
    );
    const passed = await countExecutions(
      ci,
      { status: "passed", package_name: packageName, version },
      plan.runs,
    );
    let leftOver = 0;
    for (const status of ["queued", "running"]) {
      const page = await getJson<Page>(ci, `/v1/executions?${new URLSearchParams({ status, limit: "200" })}`);
      leftOver += page.items.length;
    }
    const result: RoundResult = {
      round: round + 1,
      version,
      queued: queued.ids.length,
      seedSeconds: queued.seconds,
      me: meResult,
      meP50BeforeAfter: [summarize(meBefore.times).p50Ms, summarize(meAfter.times).p50Ms],
      drain: drained,
      handedOut,
      missing: sets.missing,
      unexpected: sets.unexpected,
      passed,
      leftOver,
      statements,
    };
    rounds.push(result);
    const s = roundStats(result);
    log(
      `${dialect}: round ${round + 1}/${plan.rounds}  ${formatNumber(claimsPerSecond(result))} claims/s, claim p50 ${ms(s.claim.p50Ms)} p99 ${ms(s.claim.p99Ms)} (server CPU ${formatNumber(drained.cpu.serverPercent)}%, other ${formatNumber(drained.cpu.otherPercent)}%)  GET /v1/me ${formatNumber(mePerSecond(result))}/s p50 ${ms(s.me.p50Ms)} p99 ${ms(s.me.p99Ms)}  ${statementsPerCycle(result).toFixed(2)} statements per cycle, duplicates ${handedOut.duplicates}, passed ${formatNumber(passed)}/${formatNumber(queued.ids.length)}, left queued/running ${leftOver}`,
    );
  }
  // An empty queue after 10k claims: on PostgreSQL the claimed runs' old index entries may still be there.
  const planAfter = await inspector.explain(statement);
  await server.stop();
  return { dialect, rounds, plan: claimPlan, planAfter, agentRateLimitPolicy, warm, agents: plan.agents };
}

/** Counts the executions a filter lists, page by page (200 each), at most enough pages for `expected` + 1. */
async function countExecutions(
  client: SequentialClient,
  filter: Record<string, string>,
  expected: number,
): Promise<number> {
  let count = 0;
  let cursor: string | null = null;
  const pages = Math.ceil((expected + 1) / 200) + 1;
  for (let page = 0; page < pages; page++) {
    const query: Record<string, string> = { ...filter, limit: "200", ...(cursor ? { cursor } : {}) };
    const response: Page = await getJson<Page>(client, `/v1/executions?${new URLSearchParams(query)}`);
    count += response.items.filter((e) => e.status === filter.status).length;
    cursor = response.next_cursor;
    if (!cursor) break;
  }
  return count;
}

interface Page {
  items: Array<{ id: string; status: string }>;
  next_cursor: string | null;
}

// ── servers and API calls ───────────────────────────────────────────────────────────────────────────────

interface Testbay extends Omit<TestbayOpening, "ci"> {
  /** The SDK as the ci client: setting up (app, plans, uploads). */
  sdk: TestbayOpening["ci"];
  /** One keep-alive connection with the ci token: the batch triggers that queue and the checks. */
  ci: SequentialClient;
  databaseUrl: string;
  /** Where the server writes its statement count when asked (claim-statements.ts). */
  statementFile: string;
}

async function startTestbay(label: string, dialect: Dialect, context: Context): Promise<Testbay> {
  const { dir, cpu, scope } = context;
  const statementFile = path.join(dir, `${label}.statements`);
  const opening = await openTestbay({
    name: label,
    dir,
    scope,
    cpu,
    dialect,
    // The statement counter is preloaded before the server's own code (and the bench servers' tsx).
    nodeFlags: ["--import", statementCounter],
    env: {
      BENCH_STATEMENT_COUNT_FILE: statementFile,
      TESTBAY_LOCAL_AGENT: "false",
      TESTBAY_AGENT_RATE_LIMIT_BURST: unlimited,
      TESTBAY_AGENT_RATE_LIMIT_PER_SECOND: unlimited,
    },
  });
  const ci = new SequentialClient(opening.origin, { "x-api-key": opening.token });
  scope.defer(() => ci.close());
  return { ...opening, databaseUrl: opening.databaseUrl as string, ci, sdk: opening.ci, statementFile };
}

/** `testbay-server client create --org bench --role agent` on the server's database, as an operator would. */
async function createAgentClient(testbay: Testbay): Promise<{ client_id: string; client_secret: string }> {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("TESTBAY_")) env[key] = value;
  env.TESTBAY_DATA_DIR = testbay.dataDir;
  env.TESTBAY_DATABASE_URL = testbay.databaseUrl;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [cliEntry, "client", "create", "--org", "bench", "--role", "agent"],
    { cwd: repoRoot, env, timeout: 60_000, encoding: "utf8" },
  );
  const created = JSON.parse(stdout) as { client_id?: string; client_secret?: string; role?: string };
  if (!created.client_id || !created.client_secret || created.role !== "agent") {
    throw new Error(`testbay-server client create printed ${stdout.slice(0, 300)}`);
  }
  return { client_id: created.client_id, client_secret: created.client_secret };
}

/** The token is an agent's, and the agent policy of the limiter runs with the raised limit. */
async function checkAgent(origin: string, token: string): Promise<string> {
  const response = await fetch(`${origin}/v1/me`, { headers: { "x-api-key": token } });
  const body = (await response.json()) as { role?: string };
  const policy = response.headers.get("ratelimit-policy") ?? "";
  if (response.status !== 200 || body.role !== "agent") {
    throw new Error(`GET /v1/me with the agent token answered ${response.status}: ${JSON.stringify(body)}`);
  }
  if (!response.headers.get("ratelimit") || !policy.includes(`"agent";q=${unlimited}`)) {
    throw new Error(`the agent's rate limit is not the raised one: RateLimit-Policy ${policy || "(none)"}`);
  }
  return policy;
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

// ── the report ──────────────────────────────────────────────────────────────────────────────────────────

function roundStats(x: RoundResult) {
  return {
    me: summarize(x.me.times),
    claim: summarize(x.drain.claimed.map((c) => c.claimMs)),
    complete: summarize(x.drain.claimed.map((c) => c.completeMs)),
  };
}

function claimsPerSecond(x: RoundResult): number {
  return perSecond(x.drain.claimed.length, x.drain.ms);
}

function mePerSecond(x: RoundResult): number {
  return perSecond(x.me.times.length, x.me.ms);
}

/** Statements the server sent during the drain per claim + complete cycle (the 204 claims that end it included). */
function statementsPerCycle(x: RoundResult): number {
  return x.drain.claimed.length > 0 ? x.statements / x.drain.claimed.length : Number.NaN;
}

/** CPU PostgreSQL's backends used during the drain, per job handed out, in ms (NaN when not measured). */
function databaseCpuMsPerCycle(x: RoundResult): number {
  const percent = x.drain.cpu.databasePercent;
  if (percent === undefined || x.drain.claimed.length === 0) return Number.NaN;
  return ((percent / 100) * x.drain.ms) / x.drain.claimed.length;
}

function notPassed(x: RoundResult): number {
  return Math.max(0, x.queued - x.passed);
}

function byAgent(x: RoundResult, agents: number): number[] {
  const counts = new Array<number>(agents).fill(0);
  for (const c of x.drain.claimed) counts[c.agent] = (counts[c.agent] ?? 0) + 1;
  return counts;
}

function ms(value: number | undefined): string {
  return value === undefined ? "—" : value.toFixed(2);
}

function mainRows(r: DialectResult): Row[] {
  const cpuOf = (values: Array<number | undefined>) =>
    median(values.flatMap((v) => (v === undefined ? [] : [v])));
  const me = summarize(r.rounds.flatMap((x) => x.me.times));
  const claim = summarize(r.rounds.flatMap((x) => x.drain.claimed.map((c) => c.claimMs)));
  const complete = summarize(r.rounds.flatMap((x) => x.drain.claimed.map((c) => c.completeMs)));
  const row = (
    label: string,
    calls: number,
    rate: number,
    s: ReturnType<typeof summarize>,
    cpu: CpuWindow[],
    detail: string,
  ): Row => ({
    label,
    metrics: [
      { label: "calls", value: calls, unit: "" },
      { label: "per s", value: rate, unit: "" },
      { label: "p50", value: s.p50Ms, unit: "ms", decimals: 2 },
      { label: "p99", value: s.p99Ms, unit: "ms", decimals: 2 },
      { label: "max", value: s.maxMs, unit: "ms", decimals: 1 },
      { label: "server CPU", value: cpuOf(cpu.map((c) => c.serverPercent)), unit: "%" },
      { label: "client CPU", value: cpuOf(cpu.map((c) => c.clientPercent)), unit: "%" },
      { label: "db CPU", value: cpuOf(cpu.map((c) => c.databasePercent)), unit: "%" },
      { label: "other CPU", value: cpuOf(cpu.map((c) => c.otherPercent)), unit: "%" },
    ],
    detail,
  });
  const byRound = (pick: (x: RoundResult) => number[]) =>
    r.rounds
      .map((x) => {
        const s = summarize(pick(x));
        return `${ms(s.p50Ms)}/${ms(s.p99Ms)}`;
      })
      .join(" ");
  return [
    row(
      `${r.dialect}: GET /v1/me, 8 at once (baseline)`,
      r.rounds.reduce((n, x) => n + x.me.times.length, 0),
      median(r.rounds.map(mePerSecond)),
      me,
      r.rounds.map((x) => x.me.cpu),
      byRound((x) => x.me.times),
    ),
    row(
      `${r.dialect}: POST /v1/agent/claim → 200`,
      r.rounds.reduce((n, x) => n + x.drain.claimed.length, 0),
      median(r.rounds.map(claimsPerSecond)),
      claim,
      r.rounds.map((x) => x.drain.cpu),
      byRound((x) => x.drain.claimed.map((c) => c.claimMs)),
    ),
    row(
      `${r.dialect}: POST /v1/agent/jobs/…/complete`,
      r.rounds.reduce((n, x) => n + x.drain.claimed.length, 0),
      median(r.rounds.map(claimsPerSecond)),
      complete,
      [],
      byRound((x) => x.drain.claimed.map((c) => c.completeMs)),
    ),
  ];
}

function drainRows(r: DialectResult): Row[] {
  return r.rounds.map((x) => {
    const split = headAndTail(
      x.drain.claimed.map((c) => c.claimMs),
      headFraction,
    );
    return {
      label: `${r.dialect}: round ${x.round}`,
      metrics: [
        { label: "queued", value: x.queued, unit: "" },
        { label: "claimed", value: x.drain.claimed.length, unit: "" },
        { label: "204", value: x.drain.empty, unit: "" },
        { label: "duplicates", value: x.handedOut.duplicates, unit: "" },
        { label: "never claimed", value: x.missing, unit: "" },
        { label: "passed after", value: x.passed, unit: "" },
        { label: "drain s", value: x.drain.ms / 1000, unit: "", decimals: 1 },
        { label: "claims/s", value: claimsPerSecond(x), unit: "" },
        { label: "statements/cycle", value: statementsPerCycle(x), unit: "", decimals: 2 },
        { label: "p50 ms first 10%", value: split.head.p50, unit: "", decimals: 2 },
        { label: "p50 ms last 10%", value: split.tail.p50, unit: "", decimals: 2 },
        { label: "p99 ms first 10%", value: split.head.p99, unit: "", decimals: 2 },
        { label: "p99 ms last 10%", value: split.tail.p99, unit: "", decimals: 2 },
        { label: "seed s", value: x.seedSeconds, unit: "", decimals: 1 },
      ],
      detail: byAgent(x, r.agents)
        .map((n) => formatNumber(perSecond(n, x.drain.ms)))
        .join(" "),
    };
  });
}

function planNotes(r: DialectResult): string[] {
  if (!r.plan) return [];
  const buffers = (plan: ClaimPlan | undefined) => {
    const n = plan ? planBuffers(plan) : undefined;
    return n === undefined ? "" : `, ${formatNumber(n)} buffers`;
  };
  const after = r.planAfter
    ? `; after the last drain (nothing queued, ${formatNumber(r.rounds.reduce((n, x) => n + x.drain.claimed.length, 0))} runs claimed since the first plan): ${claimAccessPath(r.planAfter)}${buffers(r.planAfter)}`
    : "";
  const notes = [
    `claim query plan, ${r.dialect} (${r.dialect === "postgres" ? "EXPLAIN (ANALYZE, BUFFERS)" : "EXPLAIN QUERY PLAN"} of the SELECT inside the server's claim statement, features/device-runs nextRun), with ${formatNumber(r.rounds[0]?.queued)} runs queued: ${claimAccessPath(r.plan)}${buffers(r.plan)}${after}`,
  ];
  if (r.plan.problems.length > 0) {
    notes.push(
      `WARNING: ${r.dialect}: the claim's SELECT does not scale with the queue: ${r.plan.problems.join("; ")}`,
    );
  }
  return notes;
}

function warnings(results: DialectResult[]): string[] {
  const out: string[] = [];
  for (const r of results) {
    for (const x of r.rounds) {
      if (x.handedOut.duplicates > 0) {
        out.push(
          `WARNING: ${r.dialect} round ${x.round}: ${x.handedOut.duplicates} duplicate claims, e.g. ${x.handedOut.repeated.map((d) => `${d.id} ×${d.times}`).join(", ")}`,
        );
      }
      if (x.missing > 0 || x.unexpected > 0 || x.passed !== x.queued || x.leftOver > 0) {
        out.push(
          `WARNING: ${r.dialect} round ${x.round}: ${x.missing} triggered executions never claimed, ${x.unexpected} claimed that were not triggered this round, ${x.passed} of ${x.queued} listed passed, ${x.leftOver} left queued or running`,
        );
      }
      if (x.drain.oddCompletions.length > 0) {
        out.push(
          `WARNING: ${r.dialect} round ${x.round}: completions not passed: ${x.drain.oddCompletions.slice(0, 3).join(" | ")}`,
        );
      }
      if (x.me.cutShort)
        out.push(
          `WARNING: ${r.dialect} round ${x.round}: the GET /v1/me series was cut short by its time bound`,
        );
      const [before, after] = x.meP50BeforeAfter;
      if (after / before > 1.25 || after / before < 1 / 1.25) {
        out.push(
          `WARNING: ${r.dialect} round ${x.round}: the baseline GET /v1/me p50 was ${ms(before)} ms before the drain and ${ms(after)} ms after: the machine's speed changed during the round`,
        );
      }
      if (x.drain.cpu.clientPercent >= 85 || x.me.cpu.clientPercent >= 85) {
        out.push(
          `WARNING: ${r.dialect} round ${x.round}: the agents' process used ${formatNumber(Math.max(x.drain.cpu.clientPercent, x.me.cpu.clientPercent))}% of its core: near its limit, so latencies may include the client's own queueing`,
        );
      }
    }
    const me = r.rounds.map((x) => summarize(x.me.times).p50Ms);
    if (me.length > 1 && Math.max(...me) / Math.min(...me) > 1.25) {
      out.push(
        `WARNING: ${r.dialect}: the baseline GET /v1/me p50 moved ×${(Math.max(...me) / Math.min(...me)).toFixed(2)} between rounds: the machine's speed changed, read the round-by-round ratios`,
      );
    }
  }
  return out;
}

/** The admin URL without a password, if it has one. */
function redact(url: string): string {
  const parsed = new URL(url);
  if (parsed.password) parsed.password = "***";
  return parsed.toString();
}
