import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import type { ExecutionStatus } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import { decodeCursor, toPage } from "../../http/pagination.ts";
import type { Actor, AuditLog } from "../audit/index.ts";
import { type DeviceRuns, runsOnShard, type ShardableStep, type Summary } from "../device-runs/index.ts";
import type { ExecutionRecord, ExecutionsRepo } from "./executions.repo.ts";
import { type CapableAgent, type WaitingReason, waitingReason } from "./waiting-reason.ts";

/** `triggeredByName`: the name of the client that triggered it (null for a person, or a client without one). */
export function executionView(execution: ExecutionRecord, triggeredByName: string | null = null) {
  const planSteps = (execution.plan.steps ?? []) as Array<ShardableStep & { name?: string }>;
  const devices = execution.deviceRuns.map((run) => ({
    device: run.device,
    shard: run.shard ?? 0,
    shards_planned: run.shardsPlanned ?? null,
    setup_ms: run.setupMs ?? null,
    status: run.status,
    attempt: run.attempt,
    reason: run.reason,
    summary: run.summary && withQuarantined(run.summary),
    agent_id: run.agentId,
    claimed_device: run.claimedDevice,
    started_at: run.startedAt,
    finished_at: run.finishedAt,
    steps: planSteps.map((step, index) => {
      const result = run.steps.find((s) => s.stepIndex === index);
      return {
        index,
        type: step.type,
        name: step.name ?? step.type,
        // A step that does not run on this shard (API.md §5 shards) is skipped there, not pending forever.
        status: result?.status ?? (runsOnShard(step, run.shard ?? 0) ? "pending" : "skipped"),
        message: result?.message ?? null,
        started_at: result?.startedAt ?? null,
        finished_at: result?.finishedAt ?? null,
      };
    }),
  }));
  return {
    id: execution.id,
    kind: execution.kind ?? "run",
    name: typeof execution.plan.name === "string" ? execution.plan.name : null,
    test_plan_id: execution.testPlanId,
    package_name: execution.packageName,
    version: execution.version,
    status: execution.status,
    cancel_requested: execution.cancelRequested,
    created_at: execution.createdAt,
    started_at: execution.startedAt,
    finished_at: execution.finishedAt,
    summary: withQuarantined(execution.summary),
    ci: execution.ci,
    priority: execution.priority ?? "normal",
    triggered_by:
      execution.triggeredByPerson === null
        ? { type: "client" as const, id: execution.triggeredBy, name: triggeredByName }
        : { type: "person" as const, id: execution.triggeredByPerson, name: null },
    client_result: execution.clientResult ?? null,
    // Filled in where executions are read (ExecutionsService.views): it needs the online agents.
    waiting_reason: null as WaitingReason | null,
    devices,
    steps: planSteps.map((step, index) => ({
      index,
      type: step.type,
      name: step.name ?? step.type,
      status: worstOf(devices.map((d) => d.steps[index]?.status ?? "pending")),
    })),
  };
}

/** A step's status across device runs: the one that most needs attention. */
const attentionOrder = ["failed", "errored", "cancelled", "running", "pending", "skipped", "passed"];
function worstOf(statuses: string[]): string {
  return attentionOrder.find((status) => statuses.includes(status)) ?? "pending";
}

export const emptySummary = { tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0, quarantined_failures: 0 };

/** Summaries stored before quarantine (issue 15) have no quarantined_failures: none were. */
const withQuarantined = (summary: Summary): Required<Summary> => ({ quarantined_failures: 0, ...summary });

export class ExecutionsService {
  private readonly cancelListeners = new Set<
    (organizationId: string, executionId: string) => Promise<void>
  >();

  constructor(
    readonly repo: ExecutionsRepo,
    private readonly clock: Clock,
    /** The organization's online agents, to say why a queued execution waits. */
    private readonly onlineAgents: (organizationId: string) => Promise<CapableAgent[]> = async () => [],
    private readonly audit?: AuditLog,
    /** Tells the dashboards watching the organization (GET /v1/events) that an execution changed. */
    private readonly changed: (organizationId: string, executionId: string) => void = () => {},
    /** Where a cancel goes: the device runs' lives (features/device-runs). */
    private readonly runs?: Pick<DeviceRuns, "cancel">,
  ) {}

  /**
   * Views of executions with their waiting_reason and the names of the clients that triggered them. The
   * online agents are read once for all of them, and only when one is queued (most reads are of running or
   * finished executions); the names in one read.
   */
  async views(organizationId: string, executions: readonly ExecutionRecord[]) {
    const anyQueued = executions.some((execution) => execution.status === "queued");
    const online = anyQueued ? await this.onlineAgents(organizationId) : [];
    const limit = anyQueued ? await this.repo.organizationLimit(organizationId) : null;
    const names = await this.repo.clientNames(
      executions.filter((execution) => execution.triggeredByPerson === null).map((e) => e.triggeredBy),
    );
    return executions.map((execution) => ({
      ...executionView(execution, names.get(execution.triggeredBy) ?? null),
      waiting_reason: waitingReason(execution, online, limit),
    }));
  }

  async view(organizationId: string, execution: ExecutionRecord) {
    const [view] = await this.views(organizationId, [execution]);
    return view as ReturnType<typeof executionView>;
  }

  async get(organizationId: string, id: string): Promise<ExecutionRecord> {
    const execution = await this.repo.find(organizationId, id);
    if (!execution) {
      throw new ApiError("execution_not_found", {
        reason: "unknown",
        detail: `There is no execution ${id}.`,
      });
    }
    return execution;
  }

  async list(
    organizationId: string,
    query: {
      test_plan_id?: string;
      package_name?: string;
      version?: string;
      status?: ExecutionStatus;
      branch?: string;
      commit?: string;
      limit?: number;
      cursor?: string;
    },
  ) {
    const limit = query.limit ?? 50;
    const rows = await this.repo.list(
      organizationId,
      {
        testPlanId: query.test_plan_id,
        packageName: query.package_name,
        version: query.version,
        status: query.status,
        branch: query.branch,
        commit: query.commit,
      },
      limit,
      decodeCursor(query.cursor),
    );
    const page = toPage(rows, limit, (row) => row);
    return { items: await this.views(organizationId, page.items), next_cursor: page.next_cursor };
  }

  /**
   * Calls `listener` (awaited before the cancel is answered) with each running execution cancelled, for
   * features that can stop it sooner than the agent's next heartbeat (an Appium session: sessions.feature.ts).
   * The listener must not reject. Returns the function that stops it.
   */
  onRunningCancelled(listener: (organizationId: string, executionId: string) => Promise<void>): () => void {
    this.cancelListeners.add(listener);
    return () => this.cancelListeners.delete(listener);
  }

  /**
   * A queued execution is cancelled at once; a running one is flagged, and its agent stops it at its next
   * heartbeat (or at once, where a listener can tell it: onRunningCancelled). A finished one stays as it ended
   * (cancelling it again is harmless).
   */
  async cancel(organizationId: string, id: string, actor?: Actor): Promise<ExecutionRecord> {
    const before = await this.get(organizationId, id);
    if (!this.runs) throw new Error("ExecutionsService: cancel needs the device runs");
    await this.runs.cancel(organizationId, id, isoTime(this.clock.now()));
    if (before.status === "running") {
      for (const listener of this.cancelListeners) await listener(organizationId, id);
    }
    if (before.status === "queued" || before.status === "running") this.changed(organizationId, id);
    // Only a cancel that stopped something is worth a line: cancelling a finished run changes nothing.
    if (this.audit && actor && (before.status === "queued" || before.status === "running")) {
      await this.audit.record({
        organizationId,
        actor,
        action: "execution.cancelled",
        target: { type: "execution", id },
        details: { status_before: before.status },
      });
    }
    return this.get(organizationId, id);
  }
}
