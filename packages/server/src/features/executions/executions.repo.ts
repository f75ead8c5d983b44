import type { Kysely, Selectable } from "kysely";
import { newestFirstPage } from "../../db/keyset.ts";
import type { Database, ExecutionKind, ExecutionPriority, ExecutionStatus } from "../../db/schema.ts";
import type { Position } from "../../http/pagination.ts";
import { enqueueRuns, organizationLimit, type RunToQueue, type Summary } from "../device-runs/index.ts";
import type { ResultsRepo, StepResult } from "./results.repo.ts";

export interface DeviceRunRecord {
  id: string;
  executionId: string;
  position: number;
  device: Record<string, unknown> | null;
  status: ExecutionStatus;
  attempt: number;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  reason: string | null;
  /** The latest attempt's summary, once it ended. */
  summary: Summary | null;
  agentId: string | null;
  /** The agent's device the run is (or was last) on. */
  claimedDevice: Record<string, unknown> | null;
  /** Step results of the latest attempt, by step index. */
  steps: StepResult[];
  /** Which shard of its device entry it is (API.md §5 `shards`); absent: 0. */
  shard?: number;
  /** How many device runs its entry makes; absent: 1. */
  shardCount?: number;
  /** How shards: "auto" chose shardCount at trigger (API.md §13); absent: not asked. */
  shardsPlanned?: { count: number; reason: string };
  /** How long the agent took to make the device clean for the latest attempt (ms); absent: not reported. */
  setupMs?: number;
}

/** Where a trigger came from in the caller's CI (API.md §6): only the fields it gave. */
export interface CiMetadata {
  provider?: string;
  branch?: string;
  commit?: string;
  pull_request?: string;
  build_url?: string;
}

const ciFields = ["provider", "branch", "commit", "pull_request", "build_url"] as const;

/** The fields given with a value; null when none was (empty strings count as not given). */
export function ciOf(input: CiMetadata | undefined): CiMetadata | null {
  if (!input) return null;
  const kept: CiMetadata = {};
  for (const field of ciFields) {
    const value = input[field];
    if (value) kept[field] = value;
  }
  return Object.keys(kept).length > 0 ? kept : null;
}

export interface ExecutionRecord {
  id: string;
  organizationId: string;
  /** A test plan's run, or a WebDriver session (API.md §12); absent: a run. */
  kind?: ExecutionKind;
  /** Null for a session: it has no test plan. */
  testPlanId: string | null;
  /** Null for a session that names no registered app (API.md §12: by URL or none). */
  appVersionId: string | null;
  packageName: string | null;
  version: string | null;
  status: ExecutionStatus;
  plan: Record<string, unknown>;
  env: Record<string, string>;
  summary: Summary;
  cancelRequested: boolean;
  /** The client's ID, or the person's user ID when someone triggered it from the dashboard. */
  triggeredBy: string;
  /** The email of that person; null when a client triggered it. */
  triggeredByPerson: string | null;
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  ci: CiMetadata | null;
  /** Which of the organization's queued runs a device takes first (API.md §15); absent when writing: normal. */
  priority?: ExecutionPriority;
  deviceRuns: DeviceRunRecord[];
  /** A session's verdict as its client set it (features/sessions writes it); absent for runs and when unset. */
  clientResult?: ClientResult | null;
}

export interface ClientResult {
  status: "passed" | "failed";
  reason: string | null;
}

export interface ExecutionFilter {
  testPlanId?: string;
  packageName?: string;
  version?: string;
  status?: ExecutionStatus;
  branch?: string;
  commit?: string;
}

export class ExecutionsRepo {
  constructor(
    private readonly db: Kysely<Database>,
    private readonly results: ResultsRepo,
  ) {}

  /**
   * Inserts executions and queues their device runs (device-runs' enqueueRuns, the only writer of device_runs)
   * in one transaction: a batch is recorded whole or not at all. `within` writes, in that transaction, what
   * another feature keeps of them (a WebDriver session's row, features/sessions/sessions.repo.ts).
   */
  async insertAll(
    executions: ExecutionRecord[],
    within?: (trx: Kysely<Database>) => Promise<void>,
  ): Promise<void> {
    if (executions.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      await trx
        .insertInto("executions")
        .values(
          executions.map((e) => ({
            id: e.id,
            kind: e.kind ?? "run",
            organization_id: e.organizationId,
            test_plan_id: e.testPlanId,
            app_version_id: e.appVersionId,
            package_name: e.packageName,
            version: e.version,
            status: e.status,
            plan: JSON.stringify(e.plan),
            env: JSON.stringify(e.env),
            summary: JSON.stringify(e.summary),
            cancel_requested: e.cancelRequested ? 1 : 0,
            triggered_by: e.triggeredBy,
            created_at: e.createdAt,
            started_at: e.startedAt,
            finished_at: e.finishedAt,
            ci_provider: e.ci?.provider ?? null,
            ci_branch: e.ci?.branch ?? null,
            ci_commit: e.ci?.commit ?? null,
            ci_pull_request: e.ci?.pull_request ?? null,
            ci_build_url: e.ci?.build_url ?? null,
            priority: e.priority ?? "normal",
          })),
        )
        .execute();
      await enqueueRuns(
        trx,
        executions.flatMap((e) =>
          e.deviceRuns.map((run) => ({
            ...run,
            organizationId: e.organizationId,
            priority: e.priority ?? "normal",
            plan: e.plan as RunToQueue["plan"],
          })),
        ),
      );
      await within?.(trx);
    });
  }

  /** The organization's cap on running device runs and how many run now; null: no cap (API.md §15). */
  organizationLimit(organizationId: string): Promise<{ max: number; running: number } | null> {
    return organizationLimit(this.db, organizationId);
  }

  async find(organizationId: string, id: string): Promise<ExecutionRecord | undefined> {
    const row = await this.db
      .selectFrom("executions")
      .selectAll()
      .where("id", "=", id)
      .where("organization_id", "=", organizationId)
      .executeTakeFirst();
    if (!row) return undefined;
    const [withRuns] = await this.records([row]);
    return withRuns;
  }

  async list(organizationId: string, filter: ExecutionFilter, limit: number, after: Position | undefined) {
    let query = this.db.selectFrom("executions").selectAll().where("organization_id", "=", organizationId);
    if (filter.testPlanId !== undefined) query = query.where("test_plan_id", "=", filter.testPlanId);
    if (filter.packageName !== undefined) query = query.where("package_name", "=", filter.packageName);
    if (filter.version !== undefined) query = query.where("version", "=", filter.version);
    if (filter.status !== undefined) query = query.where("status", "=", filter.status);
    if (filter.branch !== undefined) query = query.where("ci_branch", "=", filter.branch);
    if (filter.commit !== undefined) query = query.where("ci_commit", "=", filter.commit);
    const rows = await newestFirstPage(query, limit, after).execute();
    return this.records(rows);
  }

  /** The names of these clients, by ID; clients without a name are left out. One read, none for no IDs. */
  async clientNames(ids: readonly string[]): Promise<Map<string, string>> {
    const clients = [...new Set(ids)];
    if (clients.length === 0) return new Map();
    const rows = await this.db
      .selectFrom("clients")
      .select(["id", "name"])
      .where("id", "in", clients)
      .where("name", "is not", null)
      .execute();
    return new Map(rows.map((row) => [row.id, row.name as string]));
  }

  /** People's emails by user ID, for the IDs among `triggeredBy` that are people's (one read, none if none are). */
  private async emailsOfPeople(triggeredBy: readonly string[]): Promise<Map<string, string>> {
    const people = [...new Set(triggeredBy.filter((id) => id.startsWith("usr_")))];
    if (people.length === 0) return new Map();
    const rows = await this.db
      .selectFrom("users")
      .select(["id", "email"])
      .where("id", "in", people)
      .execute();
    return new Map(rows.map((row) => [row.id, row.email]));
  }

  /** The executions' rows as records: with their device runs, step results and who triggered them. */
  private async records(rows: Selectable<Database["executions"]>[]): Promise<ExecutionRecord[]> {
    if (rows.length === 0) return [];
    const emails = await this.emailsOfPeople(rows.map((row) => row.triggered_by));
    const runs = await this.db
      .selectFrom("device_runs")
      .selectAll()
      .where(
        "execution_id",
        "in",
        rows.map((r) => r.id),
      )
      .orderBy("execution_id")
      .orderBy("position")
      .orderBy("shard")
      .execute();
    const steps = await this.results.stepResults(rows.map((r) => r.id));
    const clientResults = await this.clientResults(rows.filter((r) => r.kind === "session").map((r) => r.id));
    const byExecution = new Map<string, DeviceRunRecord[]>();
    for (const run of runs) {
      const list = byExecution.get(run.execution_id) ?? [];
      list.push({
        id: run.id,
        executionId: run.execution_id,
        position: Number(run.position),
        device: run.device === null ? null : (JSON.parse(run.device) as Record<string, unknown>),
        status: run.status,
        attempt: Number(run.attempt),
        createdAt: run.created_at,
        startedAt: run.started_at,
        finishedAt: run.finished_at,
        reason: run.reason,
        summary: run.summary === null ? null : (JSON.parse(run.summary) as Summary),
        agentId: run.agent_id,
        claimedDevice:
          run.claimed_device === null ? null : (JSON.parse(run.claimed_device) as Record<string, unknown>),
        steps: steps.filter((step) => step.deviceRunId === run.id),
        shard: Number(run.shard),
        shardCount: Number(run.shard_count),
        ...(run.shards_planned === null
          ? {}
          : { shardsPlanned: JSON.parse(run.shards_planned) as { count: number; reason: string } }),
        ...(run.setup_ms === null ? {} : { setupMs: Number(run.setup_ms) }),
      });
      byExecution.set(run.execution_id, list);
    }
    return rows.map((row) => ({
      id: row.id,
      organizationId: row.organization_id,
      kind: row.kind,
      testPlanId: row.test_plan_id,
      appVersionId: row.app_version_id,
      packageName: row.package_name,
      version: row.version,
      status: row.status,
      plan: JSON.parse(row.plan) as Record<string, unknown>,
      env: JSON.parse(row.env) as Record<string, string>,
      summary: JSON.parse(row.summary) as Summary,
      cancelRequested: Number(row.cancel_requested) === 1,
      triggeredBy: row.triggered_by,
      triggeredByPerson: emails.get(row.triggered_by) ?? null,
      createdAt: row.created_at,
      startedAt: row.started_at,
      finishedAt: row.finished_at,
      ci: ciOf({
        provider: row.ci_provider ?? undefined,
        branch: row.ci_branch ?? undefined,
        commit: row.ci_commit ?? undefined,
        pull_request: row.ci_pull_request ?? undefined,
        build_url: row.ci_build_url ?? undefined,
      }),
      priority: row.priority,
      deviceRuns: byExecution.get(row.id) ?? [],
      ...(row.kind === "session" ? { clientResult: clientResults.get(row.id) ?? null } : {}),
    }));
  }

  /** The verdicts clients set on these sessions (webdriver_sessions, written by features/sessions), by ID. */
  private async clientResults(sessionIds: readonly string[]): Promise<Map<string, ClientResult>> {
    if (sessionIds.length === 0) return new Map();
    const rows = await this.db
      .selectFrom("webdriver_sessions")
      .select(["execution_id", "result_status", "result_reason"])
      .where("execution_id", "in", sessionIds)
      .where("result_status", "is not", null)
      .execute();
    return new Map(
      rows.map((row) => [
        row.execution_id,
        { status: row.result_status as ClientResult["status"], reason: row.result_reason },
      ]),
    );
  }
}
