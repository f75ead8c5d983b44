import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import type { ExecutionStatus } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import { decodeCursor, toPage } from "../../http/pagination.ts";
import type { ExecutionRecord, ExecutionsRepo } from "./executions.repo.ts";

export function executionView(execution: ExecutionRecord) {
  const planSteps = (execution.plan.steps ?? []) as Array<{ type: string; name?: string }>;
  const devices = execution.deviceRuns.map((run) => ({
    device: run.device,
    status: run.status,
    attempt: run.attempt,
    reason: run.reason,
    summary: run.summary,
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
        status: result?.status ?? "pending",
        message: result?.message ?? null,
        started_at: result?.startedAt ?? null,
        finished_at: result?.finishedAt ?? null,
      };
    }),
  }));
  return {
    id: execution.id,
    test_plan_id: execution.testPlanId,
    package_name: execution.packageName,
    version: execution.version,
    status: execution.status,
    cancel_requested: execution.cancelRequested,
    created_at: execution.createdAt,
    started_at: execution.startedAt,
    finished_at: execution.finishedAt,
    summary: execution.summary,
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

export const emptySummary = { tests: 0, passed: 0, failed: 0, skipped: 0, flaky: 0 };

export class ExecutionsService {
  constructor(
    readonly repo: ExecutionsRepo,
    private readonly clock: Clock,
  ) {}

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
      },
      limit,
      decodeCursor(query.cursor),
    );
    return toPage(rows, limit, executionView);
  }

  /**
   * A queued execution is cancelled at once; a running one is flagged, and its agent stops it at its next
   * heartbeat. A finished one stays as it ended (cancelling it again is harmless).
   */
  async cancel(organizationId: string, id: string): Promise<ExecutionRecord> {
    await this.get(organizationId, id);
    await this.repo.cancel(organizationId, id, isoTime(this.clock.now()));
    return this.get(organizationId, id);
  }
}
