import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import type { ExecutionPriority } from "../../db/schema.ts";
import { ApiError, remedy } from "../../errors.ts";
import { newId } from "../../ids.ts";
import type { AppRecord } from "../apps/index.ts";
import type { Actor, AuditLog } from "../audit/index.ts";
import type { ShardableStep } from "../device-runs/index.ts";
import {
  type CiMetadata,
  ciOf,
  type ExecutionRecord,
  type ExecutionsRepo,
  emptySummary,
  queuedDeviceRun,
} from "../executions/index.ts";
import { type TestPlanRecord, type TestPlansService, testPlanNotFound } from "../testplans/index.ts";
import type { VersionRecord, VersionsService } from "../versions/index.ts";
import { hasAutoShards, planShards, type ShardedPlan, type ShardFactsSource } from "./auto-shard-plan.ts";
import { needsTestPackage, resolveInstrumentationSteps } from "./instrumentation-steps.ts";
import { checkVersionFiles, namesVersionFiles } from "./version-file-steps.ts";

export interface TriggerRequest {
  organizationId: string;
  clientId: string;
  packageName: string;
  version: string;
  testPlanIds: string[];
  env: Record<string, string>;
  /** Where the trigger came from in the caller's CI; kept on every execution it creates. */
  ci?: CiMetadata;
  /** Kept on every execution it creates (API.md §15); absent: normal. */
  priority?: ExecutionPriority;
  /** Who triggered, for the audit log. */
  actor?: Actor;
}

export interface FailedExecution {
  test_plan_id: string;
  status: number;
  code: string;
  reason?: string;
  detail: string;
  fix: string;
}

export interface TriggerOutcome {
  executions: ExecutionRecord[];
  failed: FailedExecution[];
}

function failure(id: string, error: ApiError): FailedExecution {
  return {
    test_plan_id: id,
    status: error.status,
    code: error.code,
    ...(error.reason === undefined ? {} : { reason: error.reason }),
    detail: error.detail,
    fix: error.fix,
  };
}

/** Creates executions: one per plan, one queued device run per entry of the plan's devices (one for []). */
export class TriggersService {
  constructor(
    private readonly versions: VersionsService,
    private readonly plans: TestPlansService,
    private readonly executions: ExecutionsRepo,
    private readonly clock: Clock,
    /** Wakes agents waiting in a claim long-poll for this organization, and tells its dashboards. */
    private readonly onQueued: (organizationId: string, executionIds: string[]) => void = () => {},
    private readonly audit?: AuditLog,
    /** What shards: "auto" reads (API.md §13); without it, auto steps run unsharded. */
    private readonly shardFacts?: ShardFactsSource,
  ) {}

  /**
   * Triggers every plan that can be triggered and reports each one that cannot. The app and the version
   * must exist (else the whole request fails); each plan must exist in the organization, be active and
   * test this app. The executions of one call are recorded in one transaction.
   */
  async trigger(request: TriggerRequest): Promise<TriggerOutcome> {
    const { app, version } = await this.versions.get(
      request.organizationId,
      request.packageName,
      request.version,
    );
    const found = new Map(
      (await this.plans.findMany(request.organizationId, request.testPlanIds)).map((plan) => [plan.id, plan]),
    );
    const failed: FailedExecution[] = [];
    const executions: ExecutionRecord[] = [];
    const now = this.clock.now();
    // Read once, only when some plan runs instrumentation.
    const testPackage = [...found.values()].some(needsTestPackage)
      ? await this.versions.testPackageOf(version)
      : undefined;
    // Read once, only when some plan names version files (API.md §14).
    const versionFiles = [...found.values()].some(namesVersionFiles)
      ? await this.versions.fileNamesOf(version)
      : new Set<string>();
    // Read once per trigger, only when some plan asks for shards: "auto".
    let online: ReturnType<ShardFactsSource["onlineAgents"]> | undefined;
    const onlineAgents = () => {
      online ??= this.shardFacts?.onlineAgents(request.organizationId) ?? Promise.resolve([]);
      return online;
    };
    for (const id of request.testPlanIds) {
      const plan = found.get(id);
      if (plan?.state !== "active") {
        failed.push(failure(id, notTriggerable(id, plan?.state, app)));
      } else if (plan.appId !== app.id) {
        failed.push(failure(id, otherApp(plan, app)));
      } else {
        try {
          const steps = resolveInstrumentationSteps(plan, request, testPackage);
          checkVersionFiles(plan, request, versionFiles);
          const sharded = await planShards(
            steps as Array<(typeof steps)[number] & ShardableStep>,
            plan.devices.length > 0 ? plan.devices : [null],
            async () => ({
              testsMs: hasAutoShards(steps as ShardableStep[])
                ? ((await this.shardFacts?.testsMs(request.organizationId, plan.id)) ?? null)
                : null,
              online: await onlineAgents(),
            }),
          );
          executions.push(this.newExecution(request, plan, sharded, version, now));
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          failed.push(failure(id, error));
        }
      }
    }
    await this.executions.insertAll(executions);
    if (executions.length > 0) {
      this.onQueued(
        request.organizationId,
        executions.map((execution) => execution.id),
      );
    }
    const { audit, actor } = { audit: this.audit, actor: request.actor };
    if (audit && actor) {
      for (const execution of executions) {
        await audit.record({
          organizationId: request.organizationId,
          actor,
          action: "execution.triggered",
          target: { type: "execution", id: execution.id },
          details: {
            test_plan_id: execution.testPlanId,
            package_name: execution.packageName,
            version: execution.version,
          },
        });
      }
    }
    return { executions, failed };
  }

  private newExecution(
    request: TriggerRequest,
    plan: TestPlanRecord,
    { steps, entries }: ShardedPlan<TestPlanRecord["steps"][number]>,
    version: VersionRecord,
    now: number,
  ): ExecutionRecord {
    const id = newId("ex", now);
    const createdAt = isoTime(now);
    const devices: Array<Record<string, unknown> | null> = plan.devices.length > 0 ? plan.devices : [null];
    return {
      id,
      organizationId: request.organizationId,
      testPlanId: plan.id,
      appVersionId: version.id,
      packageName: plan.packageName,
      version: version.version,
      status: "queued",
      plan: {
        name: plan.name,
        devices: plan.devices,
        steps,
        timeout_seconds: plan.timeoutSeconds,
        max_attempts: plan.maxAttempts,
      },
      env: request.env,
      summary: { ...emptySummary },
      cancelRequested: false,
      triggeredBy: request.clientId,
      triggeredByPerson: request.actor?.type === "person" ? request.actor.id : null,
      createdAt,
      startedAt: null,
      finishedAt: null,
      ci: ciOf(request.ci),
      priority: request.priority ?? "normal",
      // Each device entry makes one device run per shard (API.md §5 `shards`), each claimed on its own device;
      // with shards: "auto" as many as the entry's were chosen (API.md §13), each run saying why.
      deviceRuns: devices.flatMap((device, position) => {
        const { count, planned } = entries[position] ?? { count: 1 };
        return Array.from({ length: count }, (_, shard) => ({
          ...queuedDeviceRun({ executionId: id, position, shard, shardCount: count, device, now }),
          ...(planned ? { shardsPlanned: planned } : {}),
        }));
      }),
    };
  }
}

/** testPlanNotFound, whose remedy for an unknown ID can name the app the trigger was for. */
function notTriggerable(id: string, state: TestPlanRecord["state"] | undefined, app: AppRecord): ApiError {
  const error = testPlanNotFound(id, state);
  if (error.reason !== "unknown") return error;
  return new ApiError(error.code, {
    reason: error.reason,
    detail: error.detail,
    fix: `Confirm the test plan ID: ${remedy.listPlans(app.packageName)}. Plan IDs do not work across organizations.`,
  });
}

function otherApp(plan: TestPlanRecord, app: AppRecord): ApiError {
  return new ApiError("invalid_request", {
    reason: "plan_for_other_app",
    detail: `Test plan ${plan.id} tests ${plan.packageName}, not ${app.packageName}.`,
    fix: `Trigger it with package_name ${plan.packageName} (testbay trigger --app ${plan.packageName} …), or choose a plan made for ${app.packageName}: ${remedy.listPlans(app.packageName)}.`,
  });
}

/** The batch response: 200 when every plan started, 207 when some did, an error status when none did. */
export function batchResponse(
  outcome: TriggerOutcome,
  /** The views of outcome.executions, in order. */
  executions: unknown[],
): { status: number; body: Record<string, unknown> } | ApiError {
  if (outcome.failed.length === 0) return { status: 200, body: { executions, failed_executions: [] } };
  if (executions.length > 0) return { status: 207, body: { executions, failed_executions: outcome.failed } };

  const [first] = outcome.failed;
  const same = outcome.failed.every((f) => f.code === first?.code && f.status === first?.status);
  const sameCause = same && outcome.failed.every((f) => f.reason === first?.reason);
  const code = same && first ? (first.code as ApiError["code"]) : "invalid_request";
  return new ApiError(code, {
    ...(sameCause && first?.reason ? { reason: first.reason } : {}),
    detail: `None of the ${outcome.failed.length} test plans was triggered; failed_executions says why for each.`,
    fix:
      sameCause && first
        ? first.fix
        : "Fix each plan listed in failed_executions as its fix says, then trigger again.",
    extra: { executions: [], failed_executions: outcome.failed },
  });
}
