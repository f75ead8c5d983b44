import type { Kysely } from "kysely";
import { newestFirstPage } from "../../db/keyset.ts";
import type { Database, TestPlanState } from "../../db/schema.ts";
import type { Position } from "../../http/pagination.ts";
import type { DeviceSpec, Step } from "./testplans.schemas.ts";

export interface TestPlanRecord {
  id: string;
  organizationId: string;
  appId: string;
  packageName: string;
  name: string;
  state: TestPlanState;
  devices: DeviceSpec[];
  steps: Step[];
  timeoutSeconds: number;
  maxAttempts: number;
  createdAt: string;
  updatedAt: string;
  stateChangedAt: string | null;
}

export interface TestPlanFilter {
  packageName?: string;
  states: TestPlanState[];
}

export class TestPlansRepo {
  constructor(private readonly db: Kysely<Database>) {}

  private selectPlans() {
    return this.db
      .selectFrom("test_plans")
      .innerJoin("apps", "apps.id", "test_plans.app_id")
      .selectAll("test_plans")
      .select("apps.package_name");
  }

  async insert(plan: TestPlanRecord): Promise<void> {
    await this.db
      .insertInto("test_plans")
      .values({
        id: plan.id,
        organization_id: plan.organizationId,
        app_id: plan.appId,
        created_at: plan.createdAt,
        ...changeableColumns(plan),
      })
      .execute();
  }

  /** The plan if it belongs to the organization, whatever its state. */
  async find(organizationId: string, id: string): Promise<TestPlanRecord | undefined> {
    const row = await this.selectPlans()
      .where("test_plans.id", "=", id)
      .where("test_plans.organization_id", "=", organizationId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Several plans of the organization at once (a batch trigger), whatever their state. */
  async findMany(organizationId: string, ids: string[]): Promise<TestPlanRecord[]> {
    if (ids.length === 0) return [];
    const rows = await this.selectPlans()
      .where("test_plans.id", "in", ids)
      .where("test_plans.organization_id", "=", organizationId)
      .execute();
    return rows.map(toRecord);
  }

  async list(organizationId: string, filter: TestPlanFilter, limit: number, after: Position | undefined) {
    let query = this.selectPlans()
      .where("test_plans.organization_id", "=", organizationId)
      .where("test_plans.state", "in", filter.states);
    if (filter.packageName !== undefined) query = query.where("apps.package_name", "=", filter.packageName);
    const rows = await newestFirstPage(query, limit, after, "test_plans").execute();
    return rows.map(toRecord);
  }

  async update(plan: TestPlanRecord): Promise<void> {
    await this.db
      .updateTable("test_plans")
      .set(changeableColumns(plan))
      .where("id", "=", plan.id)
      .where("organization_id", "=", plan.organizationId)
      .execute();
  }

  /** Removes plans deleted before `cutoff`; returns how many. */
  async purgeDeletedBefore(cutoff: string): Promise<number> {
    const result = await this.db
      .deleteFrom("test_plans")
      .where("state", "=", "deleted")
      .where("state_changed_at", "<", cutoff)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }
}

type PlanRow = Database["test_plans"] & { package_name: string };

function toRecord(row: PlanRow): TestPlanRecord {
  return {
    id: row.id,
    organizationId: row.organization_id,
    appId: row.app_id,
    packageName: row.package_name,
    name: row.name,
    state: row.state,
    devices: JSON.parse(row.devices) as DeviceSpec[],
    steps: JSON.parse(row.steps) as Step[],
    timeoutSeconds: Number(row.timeout_seconds),
    maxAttempts: Number(row.max_attempts),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    stateChangedAt: row.state_changed_at,
  };
}

/** The columns an update may change: all but the plan's identity, owner, app and creation time. */
function changeableColumns(plan: TestPlanRecord) {
  return {
    name: plan.name,
    state: plan.state,
    devices: JSON.stringify(plan.devices),
    steps: JSON.stringify(plan.steps),
    timeout_seconds: plan.timeoutSeconds,
    max_attempts: plan.maxAttempts,
    updated_at: plan.updatedAt,
    state_changed_at: plan.stateChangedAt,
  };
}
