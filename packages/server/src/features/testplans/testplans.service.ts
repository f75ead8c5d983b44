import type { Static } from "typebox";
import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import type { TestPlanState } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import { decodeCursor, toPage } from "../../http/pagination.ts";
import { newId } from "../../ids.ts";
import type { AppRecord, AppsService } from "../apps/index.ts";
import type { Actor, AuditAction, AuditLog } from "../audit/index.ts";
import { checkPlanOptions } from "./plan-checks.ts";
import type { TestPlanRecord, TestPlansRepo } from "./testplans.repo.ts";
import type { CreateTestPlanBody, PatchTestPlanBody, Step } from "./testplans.schemas.ts";
import { testIdentifierFix, testIdentifierProblem } from "./xcode-test-identifier.ts";

/** Deleted plans can be restored for this long, then they are purged. */
export const restoreWindowMs = 30 * 24 * 3600 * 1000;

export function testPlanView(plan: TestPlanRecord) {
  return {
    id: plan.id,
    name: plan.name,
    package_name: plan.packageName,
    state: plan.state,
    devices: plan.devices,
    steps: plan.steps,
    timeout_seconds: plan.timeoutSeconds,
    max_attempts: plan.maxAttempts,
    created_at: plan.createdAt,
    updated_at: plan.updatedAt,
    ...(plan.state === "deleted" && plan.stateChangedAt
      ? { restorable_until: isoTime(Date.parse(plan.stateChangedAt) + restoreWindowMs) }
      : {}),
  };
}

/** Why a plan cannot be triggered, with the seed's remedies; another organization's plan looks unknown. */
export function testPlanNotFound(id: string, state: TestPlanState | undefined): ApiError {
  if (state === "archived") {
    return new ApiError("test_plan_not_found", {
      reason: "archived",
      detail: `Test plan ${id} is archived.`,
      fix: `Restore it with POST /v1/testplans/${id}/restore, or create a new plan.`,
    });
  }
  if (state === "deleted") {
    return new ApiError("test_plan_not_found", {
      reason: "deleted",
      detail: `Test plan ${id} is deleted.`,
      fix: `Restore it with POST /v1/testplans/${id}/restore (possible for 30 days after deletion), or create a new plan.`,
    });
  }
  return new ApiError("test_plan_not_found", {
    reason: "unknown",
    detail: `There is no test plan ${id}.`,
    fix: "Confirm the test plan ID (GET /v1/testplans or testbay plans list lists them); plan IDs do not work across organizations.",
  });
}

/** The plan's content must make sense for its app: checks JSON Schema cannot express. */
function checkFitsApp(app: AppRecord, devices: TestPlanRecord["devices"], steps: Step[]): void {
  const errors: Array<{ path: string; in: string; message: string }> = [];
  devices.forEach((device, i) => {
    if (device.platform !== app.platform) {
      errors.push({
        path: `/devices/${i}/platform`,
        in: "body",
        message: `must be ${app.platform}, the app's platform`,
      });
    }
  });
  steps.forEach((step, i) => {
    const platform = stepPlatform[step.type];
    if (platform !== undefined && app.platform !== platform) {
      errors.push({
        path: `/steps/${i}/type`,
        in: "body",
        message: `${step.type} steps are for ${platformName[platform]} apps`,
      });
    }
  });
  const first = errors[0];
  if (first) {
    throw new ApiError("invalid_request", {
      detail: `The plan does not fit app ${app.packageName}: ${first.path} ${first.message}.`,
      fix: `Correct the fields listed in \`errors\`: ${app.packageName} is an ${platformName[app.platform]} app, so its device entries and platform-specific steps must be for ${platformName[app.platform]} (instrumentation for Android, xcuitest for iOS; maestro, inspect and shell run on both).`,
      extra: { errors },
    });
  }
}

/** Step types that run on one platform only; maestro, inspect and shell run on both. */
const stepPlatform: Partial<Record<Step["type"], "android" | "ios">> = {
  instrumentation: "android",
  xcuitest: "ios",
};
const platformName = { android: "Android", ios: "iOS" } as const;

/** xcuitest identifiers must be what xcodebuild takes: a JSON Schema pattern could say no better than "must match". */
function checkTestIdentifiers(steps: Step[]): void {
  const errors: Array<{ path: string; in: string; message: string }> = [];
  steps.forEach((step, i) => {
    if (step.type !== "xcuitest") return;
    for (const field of ["only_testing", "skip_testing"] as const) {
      step[field]?.forEach((identifier, j) => {
        const problem = testIdentifierProblem(identifier);
        if (problem !== null) {
          errors.push({ path: `/steps/${i}/${field}/${j}`, in: "body", message: problem });
        }
      });
    }
  });
  const first = errors[0];
  if (first) {
    throw new ApiError("invalid_request", {
      detail: `The request is invalid: body ${first.path} ${first.message}.`,
      fix: testIdentifierFix,
      extra: { errors },
    });
  }
}

/** What moving a plan to a state is called in the audit log. */
const stateActions: Record<TestPlanState, AuditAction> = {
  active: "test_plan.restored",
  archived: "test_plan.archived",
  deleted: "test_plan.deleted",
};

export class TestPlansService {
  constructor(
    private readonly repo: TestPlansRepo,
    private readonly apps: AppsService,
    private readonly clock: Clock,
    private readonly audit?: AuditLog,
  ) {}

  /** Appends to the audit log when there is one and the caller is known. */
  private async audited(plan: TestPlanRecord, action: AuditAction, actor: Actor | undefined) {
    if (!this.audit || !actor) return;
    await this.audit.record({
      organizationId: plan.organizationId,
      actor,
      action,
      target: { type: "test_plan", id: plan.id },
      details: { name: plan.name, package_name: plan.packageName },
    });
  }

  async create(
    organizationId: string,
    body: Static<typeof CreateTestPlanBody>,
    actor?: Actor,
  ): Promise<TestPlanRecord> {
    const app = await this.apps.get(organizationId, body.package_name);
    const devices = body.devices ?? [];
    checkTestIdentifiers(body.steps);
    checkFitsApp(app, devices, body.steps);
    checkPlanOptions(devices, body.steps);
    const now = this.clock.now();
    const plan: TestPlanRecord = {
      id: newId("tp", now),
      organizationId,
      appId: app.id,
      packageName: app.packageName,
      name: body.name,
      state: "active",
      devices,
      steps: body.steps,
      timeoutSeconds: body.timeout_seconds ?? 1800,
      maxAttempts: body.max_attempts ?? 1,
      createdAt: isoTime(now),
      updatedAt: isoTime(now),
      stateChangedAt: null,
    };
    await this.repo.insert(plan);
    await this.audited(plan, "test_plan.created", actor);
    return plan;
  }

  /** The plan in any state; 404 `unknown` for another organization's plan or no plan at all. */
  async get(organizationId: string, id: string): Promise<TestPlanRecord> {
    const plan = await this.repo.find(organizationId, id);
    if (!plan) throw testPlanNotFound(id, undefined);
    return plan;
  }

  /** Plans that can be triggered, by ID; the caller reports the missing ones with `testPlanNotFound`. */
  findMany(organizationId: string, ids: string[]): Promise<TestPlanRecord[]> {
    return this.repo.findMany(organizationId, ids);
  }

  /**
   * Lists plans newest first. Without a `state` filter it shows active and archived plans: deleted ones
   * only when asked for with `state=deleted`.
   */
  async list(
    organizationId: string,
    query: { package_name?: string; state?: TestPlanState; limit?: number; cursor?: string },
  ) {
    const limit = query.limit ?? 50;
    const states: TestPlanState[] = query.state ? [query.state] : ["active", "archived"];
    const rows = await this.repo.list(
      organizationId,
      { packageName: query.package_name, states },
      limit,
      decodeCursor(query.cursor),
    );
    return toPage(rows, limit, testPlanView);
  }

  async update(organizationId: string, id: string, patch: Static<typeof PatchTestPlanBody>, actor?: Actor) {
    const plan = await this.get(organizationId, id);
    if (plan.state === "deleted") throw testPlanNotFound(id, "deleted");
    const updated: TestPlanRecord = {
      ...plan,
      name: patch.name ?? plan.name,
      devices: patch.devices ?? plan.devices,
      steps: patch.steps ?? plan.steps,
      timeoutSeconds: patch.timeout_seconds ?? plan.timeoutSeconds,
      maxAttempts: patch.max_attempts ?? plan.maxAttempts,
      updatedAt: isoTime(this.clock.now()),
    };
    checkTestIdentifiers(updated.steps);
    checkPlanOptions(updated.devices, updated.steps);
    const app = await this.apps.get(organizationId, plan.packageName);
    checkFitsApp(app, updated.devices, updated.steps);
    await this.repo.update(updated);
    await this.audited(updated, "test_plan.updated", actor);
    return updated;
  }

  /** Moves a plan to `state`; doing it again is harmless (the plan is returned as it is). */
  async changeState(
    organizationId: string,
    id: string,
    state: TestPlanState,
    actor?: Actor,
  ): Promise<TestPlanRecord> {
    const plan = await this.get(organizationId, id);
    if (plan.state === state) return plan;
    if (state === "archived" && plan.state === "deleted") throw testPlanNotFound(id, "deleted");
    const now = isoTime(this.clock.now());
    const changed: TestPlanRecord = {
      ...plan,
      state,
      updatedAt: now,
      stateChangedAt: state === "active" ? null : now,
    };
    await this.repo.update(changed);
    await this.audited(changed, stateActions[state], actor);
    return changed;
  }

  /** Removes plans deleted more than 30 days ago. Safe to run from every instance. */
  purgeExpired(): Promise<number> {
    return this.repo.purgeDeletedBefore(isoTime(this.clock.now() - restoreWindowMs));
  }
}
