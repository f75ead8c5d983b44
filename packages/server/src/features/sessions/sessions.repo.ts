import type { Kysely } from "kysely";
import type { Database, ExecutionStatus, WebdriverSessionState } from "../../db/schema.ts";

/** A WebDriver session as stored: one per execution of kind `session` (migration 0026). */
export interface SessionRecord {
  executionId: string;
  organizationId: string;
  /** The client whose credentials created it: the session is bound to it (API.md §12). */
  clientId: string;
  state: WebdriverSessionState;
  /** What Appium answered with, once ready. */
  capabilities: Record<string, unknown> | null;
  /** Why it failed to start: a W3C error code and the agent's message. */
  error: string | null;
  message: string | null;
  endReason: string | null;
  idleTimeoutSeconds: number;
  maxDurationSeconds: number;
  resultStatus: "passed" | "failed" | null;
  resultReason: string | null;
  createdAt: string;
  readyAt: string | null;
  endedAt: string | null;
}

export type NewSession = Pick<
  SessionRecord,
  "executionId" | "organizationId" | "clientId" | "idleTimeoutSeconds" | "maxDurationSeconds" | "createdAt"
>;

/** A session with its device run: what the command relay needs to know of it (session-directory.ts). */
export interface SessionWhereabouts {
  organizationId: string;
  clientId: string;
  state: WebdriverSessionState;
  message: string | null;
  endReason: string | null;
  cancelRequested: boolean;
  /** The agent holding its device run (null while queued). */
  agentId: string | null;
  runStatus: ExecutionStatus | null;
  runReason: string | null;
}

/**
 * The only writer of `webdriver_sessions`. A session's state only moves forward: queued → ready or failed,
 * ready → ended (queued → ended when it never started); each change is one conditional UPDATE, so an agent's
 * report and an end racing each other leave one of them, never a mix.
 */
export class SessionsRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Records a new session, in the transaction that records its execution (ExecutionsRepo.insertAll). */
  static async insert(db: Kysely<Database>, session: NewSession): Promise<void> {
    await db
      .insertInto("webdriver_sessions")
      .values({
        execution_id: session.executionId,
        organization_id: session.organizationId,
        client_id: session.clientId,
        state: "queued",
        capabilities: null,
        error: null,
        message: null,
        end_reason: null,
        idle_timeout_seconds: session.idleTimeoutSeconds,
        max_duration_seconds: session.maxDurationSeconds,
        result_status: null,
        result_reason: null,
        created_at: session.createdAt,
        ready_at: null,
        ended_at: null,
      })
      .execute();
  }

  async find(organizationId: string, executionId: string): Promise<SessionRecord | undefined> {
    const row = await this.db
      .selectFrom("webdriver_sessions")
      .selectAll()
      .where("execution_id", "=", executionId)
      .where("organization_id", "=", organizationId)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      executionId: row.execution_id,
      organizationId: row.organization_id,
      clientId: row.client_id,
      state: row.state,
      capabilities:
        row.capabilities === null ? null : (JSON.parse(row.capabilities) as Record<string, unknown>),
      error: row.error,
      message: row.message,
      endReason: row.end_reason,
      idleTimeoutSeconds: Number(row.idle_timeout_seconds),
      maxDurationSeconds: Number(row.max_duration_seconds),
      resultStatus: row.result_status as SessionRecord["resultStatus"],
      resultReason: row.result_reason,
      createdAt: row.created_at,
      readyAt: row.ready_at,
      endedAt: row.ended_at,
    };
  }

  /** Appium created the session (the agent's report): false when it had failed or ended already. */
  async markReady(executionId: string, capabilities: Record<string, unknown>, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("webdriver_sessions")
      .set({ state: "ready", capabilities: JSON.stringify(capabilities), ready_at: at })
      .where("execution_id", "=", executionId)
      .where("state", "=", "queued")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** It never became ready (the agent's report, or the queue timeout): false when it was no longer queued. */
  async markFailed(executionId: string, error: string, message: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("webdriver_sessions")
      .set({ state: "failed", error, message, ended_at: at })
      .where("execution_id", "=", executionId)
      .where("state", "=", "queued")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** It ended (deleted, idle_timeout, max_duration, cancelled, agent_lost…): false when it had ended already. */
  async markEnded(executionId: string, reason: string, at: string): Promise<boolean> {
    const result = await this.db
      .updateTable("webdriver_sessions")
      .set({ state: "ended", end_reason: reason, ended_at: at })
      .where("execution_id", "=", executionId)
      .where("state", "in", ["queued", "ready"])
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /**
   * The agent's channel stayed gone (channel/channel-registry.ts): every session it held ends, so the next command
   * is told so at once rather than when the device run's lease lapses. Returns how many ended.
   */
  async markEndedOnAgent(
    organizationId: string,
    agentId: string,
    reason: string,
    at: string,
  ): Promise<number> {
    const result = await this.db
      .updateTable("webdriver_sessions")
      .set({ state: "ended", end_reason: reason, ended_at: at })
      .where("organization_id", "=", organizationId)
      .where("state", "=", "ready")
      .where((eb) =>
        eb(
          "execution_id",
          "in",
          eb
            .selectFrom("device_runs")
            .select("execution_id")
            .where("organization_id", "=", organizationId)
            .where("agent_id", "=", agentId)
            .where("status", "=", "running"),
        ),
      )
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** What the client said of its session (POST /v1/executions/{id}/result); the last word stands. */
  async setResult(executionId: string, status: "passed" | "failed", reason: string | null): Promise<void> {
    await this.db
      .updateTable("webdriver_sessions")
      .set({ result_status: status, result_reason: reason })
      .where("execution_id", "=", executionId)
      .execute();
  }

  /** The session with its device run's agent and state, in one read (session-directory.ts). */
  async whereabouts(executionId: string): Promise<SessionWhereabouts | undefined> {
    const row = await this.db
      .selectFrom("webdriver_sessions as s")
      .innerJoin("executions as e", "e.id", "s.execution_id")
      .leftJoin("device_runs as r", "r.execution_id", "s.execution_id")
      .select([
        "s.organization_id",
        "s.client_id",
        "s.state",
        "s.message",
        "s.end_reason",
        "e.cancel_requested",
        "r.agent_id",
        "r.status as run_status",
        "r.reason as run_reason",
      ])
      .where("s.execution_id", "=", executionId)
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      organizationId: row.organization_id,
      clientId: row.client_id,
      state: row.state,
      message: row.message,
      endReason: row.end_reason,
      cancelRequested: Number(row.cancel_requested) === 1,
      agentId: row.agent_id,
      runStatus: row.run_status,
      runReason: row.run_reason,
    };
  }
}
