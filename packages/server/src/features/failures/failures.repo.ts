import { type Kysely, sql } from "kysely";
import type { Database } from "../../db/schema.ts";
import { deviceFactsOf, deviceName } from "../executions/device-name.ts";

export interface FailureFilter {
  organizationId: string;
  packageName?: string;
  testPlanId?: string;
}

/** One group's failures within one plan: a group seen in several plans has a row for each. */
export interface GroupInPlan {
  signature: string;
  testPlanId: string;
  occurrences: number;
  /** The tests it failed in, within the plan: what must pass for the group to be fixed there. */
  testIds: string[];
  /** The first occurrence: its execution's created_at and id. */
  first: { at: string; executionId: string };
  /** The last occurrence: its execution, and the test case (run, attempt, seq) that is the group's example. */
  last: { at: string; executionId: string; deviceRunId: string; attempt: number; seq: number };
}

export interface ExecutionFacts {
  id: string;
  version: string | null;
  commit: string | null;
  createdAt: string;
}

export interface ExampleCase {
  executionId: string;
  deviceRunId: string;
  attempt: number;
  seq: number;
  testId: string | null;
  classname: string;
  name: string;
  status: string;
  message: string | null;
  details: string | null;
}

export interface Occurrence extends ExampleCase {
  testPlanId: string | null;
  version: string | null;
  commit: string | null;
  at: string;
  device: string | null;
}

export interface OccurrencePosition {
  at: string;
  deviceRunId: string;
  attempt: number;
  seq: number;
}

/** What a group's example case is read with (exampleOf). */
const exampleColumns = [
  "dr.execution_id",
  "tc.device_run_id",
  "tc.attempt",
  "tc.seq",
  "tc.test_id",
  "tc.classname",
  "tc.name",
  "tc.status",
  "tc.message",
  "tc.details",
] as const;

const finishedStatuses = ["passed", "failed", "errored", "cancelled"] as const;

/**
 * What failure groups are read from: the groups' rows (failure_groups, kept by failure-groups.writer.ts) and the
 * failed test cases' signatures (test_cases.failure_signature, stored by device-runs/test-cases-query.ts), joined
 * to their runs and executions. Nothing is written here.
 */
export class FailuresRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /** Test cases of the organization's plans' executions (within the filter), joined to their runs and executions. */
  private casesOfPlans(filter: FailureFilter) {
    let query = this.db
      .selectFrom("test_cases as tc")
      .innerJoin("device_runs as dr", "dr.id", "tc.device_run_id")
      .innerJoin("executions as e", "e.id", "dr.execution_id")
      .where("e.organization_id", "=", filter.organizationId)
      .where("e.test_plan_id", "is not", null);
    if (filter.testPlanId !== undefined) query = query.where("e.test_plan_id", "=", filter.testPlanId);
    if (filter.packageName !== undefined) query = query.where("e.package_name", "=", filter.packageName);
    return query;
  }

  /**
   * Every group of the organization (within the filter), per plan: the rows failure-groups.writer.ts keeps, one
   * per group and plan, rather than an aggregate of the failed cases.
   */
  async groups(filter: FailureFilter): Promise<GroupInPlan[]> {
    let query = this.db
      .selectFrom("failure_groups")
      .selectAll()
      .where("organization_id", "=", filter.organizationId);
    if (filter.testPlanId !== undefined) query = query.where("test_plan_id", "=", filter.testPlanId);
    if (filter.packageName !== undefined) query = query.where("package_name", "=", filter.packageName);
    const rows = await query.execute();
    return rows.map((row) => ({
      signature: row.signature,
      testPlanId: row.test_plan_id,
      occurrences: Number(row.occurrences),
      testIds: JSON.parse(row.test_ids) as string[],
      first: { at: row.first_at, executionId: row.first_execution_id },
      last: {
        at: row.last_at,
        executionId: row.last_execution_id,
        deviceRunId: row.last_device_run_id,
        attempt: Number(row.last_attempt),
        seq: Number(row.last_seq),
      },
    }));
  }

  /**
   * How many executions each of a page's groups failed in (within the filter): counted from its failed cases (an
   * index range of test_cases_failure_signature_idx per group, whose entries hold the run), since a distinct
   * count cannot be kept up to date in the one statement a batch of cases may cost (failure-groups.writer.ts).
   */
  async executionCounts(filter: FailureFilter, signatures: readonly string[]): Promise<Map<string, number>> {
    const counts = new Map<string, number>();
    if (signatures.length === 0) return counts;
    const rows = await this.casesOfPlans(filter)
      .select([
        "tc.failure_signature as signature",
        sql<number | string>`count(distinct e.id)`.as("executions"),
      ])
      .where("tc.failure_signature", "in", signatures)
      .groupBy("tc.failure_signature")
      .execute();
    for (const row of rows) counts.set(row.signature as string, Number(row.executions));
    return counts;
  }

  /** The version and commit of the executions groups were first and last seen in. */
  async executions(ids: readonly string[]): Promise<Map<string, ExecutionFacts>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom("executions")
      .select(["id", "version", "ci_commit", "created_at"])
      .where("id", "in", [...new Set(ids)])
      .execute();
    return new Map(rows.map((row) => [row.id, factsOf(row)]));
  }

  /** The groups' examples: test cases by run, attempt and seq. */
  async cases(
    keys: ReadonlyArray<{ deviceRunId: string; attempt: number; seq: number }>,
  ): Promise<ExampleCase[]> {
    if (keys.length === 0) return [];
    const rows = await this.db
      .selectFrom("test_cases as tc")
      .innerJoin("device_runs as dr", "dr.id", "tc.device_run_id")
      .select(exampleColumns)
      .where((eb) =>
        eb.or(
          keys.map((key) =>
            eb.and([
              eb("tc.device_run_id", "=", key.deviceRunId),
              eb("tc.attempt", "=", key.attempt),
              eb("tc.seq", "=", key.seq),
            ]),
          ),
        ),
      )
      .execute();
    return rows.map(exampleOf);
  }

  /** A plan's newest finished executions, newest first (an index range on executions_org_plan_status_idx). */
  async lastFinished(organizationId: string, testPlanId: string, count: number): Promise<ExecutionFacts[]> {
    const rows = await this.db
      .selectFrom("executions")
      .select(["id", "version", "ci_commit", "created_at"])
      .where("organization_id", "=", organizationId)
      .where("test_plan_id", "=", testPlanId)
      .where("status", "in", finishedStatuses)
      .orderBy("created_at", "desc")
      .orderBy("id", "desc")
      .limit(count)
      .execute();
    return rows.map(factsOf);
  }

  /**
   * Whether each test passed in each execution: its final case on every device run of it is `passed` (the last
   * case of the run's latest attempt, as GET /executions/{id}/tests shows it). Keyed "execution test".
   */
  async passed(executionIds: readonly string[], testIds: readonly string[]): Promise<Set<string>> {
    const passed = new Set<string>();
    if (executionIds.length === 0 || testIds.length === 0) return passed;
    const wanted = new Set(testIds);
    const finals = new Map<
      string,
      {
        status: string;
        attempt: number;
        seq: number;
        runAttempt: number;
        executionId: string;
        testId: string;
      }
    >();
    // Every case of the few executions, filtered here: asking for the test ids instead lets PostgreSQL walk
    // test_cases_test_id_idx through every execution the tests ever ran in.
    const rows = await this.db
      .selectFrom("device_runs as dr")
      .innerJoin("test_cases as tc", "tc.device_run_id", "dr.id")
      .select([
        "dr.execution_id",
        "dr.attempt as run_attempt",
        "tc.device_run_id",
        "tc.attempt",
        "tc.seq",
        "tc.test_id",
        "tc.status",
      ])
      .where("dr.execution_id", "in", executionIds)
      .execute();
    for (const row of rows) {
      if (row.test_id === null || !wanted.has(row.test_id)) continue;
      const key = `${row.device_run_id} ${row.test_id}`;
      const [attempt, seq] = [Number(row.attempt), Number(row.seq)];
      const seen = finals.get(key);
      if (seen && (seen.attempt > attempt || (seen.attempt === attempt && seen.seq > seq))) continue;
      finals.set(key, {
        status: row.status,
        attempt,
        seq,
        runAttempt: Number(row.run_attempt),
        executionId: row.execution_id,
        testId: row.test_id,
      });
    }
    const failedSomewhere = new Set<string>();
    for (const final of finals.values()) {
      // A case of an earlier attempt only (the run was re-queued and it did not come back) is not a result.
      if (final.attempt !== final.runAttempt) continue;
      const key = `${final.executionId} ${final.testId}`;
      if (final.status === "passed") passed.add(key);
      else failedSomewhere.add(key);
    }
    for (const key of failedSomewhere) passed.delete(key);
    return passed;
  }

  /** A group's occurrences, newest first, after `after` (keyset on the execution's time, then run, attempt, seq). */
  async occurrences(
    filter: FailureFilter,
    signature: string,
    limit: number,
    after: OccurrencePosition | undefined,
  ): Promise<Occurrence[]> {
    let query = this.casesOfPlans(filter)
      .select([
        ...exampleColumns,
        "e.test_plan_id",
        "e.version",
        "e.ci_commit",
        "e.created_at",
        "dr.device",
        "dr.claimed_device",
      ])
      .where("tc.failure_signature", "=", signature);
    if (after) {
      query = query.where((eb) =>
        eb.or([
          eb("e.created_at", "<", after.at),
          eb.and([
            eb("e.created_at", "=", after.at),
            eb.or([
              eb("tc.device_run_id", "<", after.deviceRunId),
              eb.and([
                eb("tc.device_run_id", "=", after.deviceRunId),
                eb.or([
                  eb("tc.attempt", "<", after.attempt),
                  eb.and([eb("tc.attempt", "=", after.attempt), eb("tc.seq", "<", after.seq)]),
                ]),
              ]),
            ]),
          ]),
        ]),
      );
    }
    const rows = await query
      .orderBy("e.created_at", "desc")
      .orderBy("tc.device_run_id", "desc")
      .orderBy("tc.attempt", "desc")
      .orderBy("tc.seq", "desc")
      .limit(limit)
      .execute();
    return rows.map((row) => ({
      ...exampleOf(row),
      testPlanId: row.test_plan_id,
      version: row.version,
      commit: row.ci_commit,
      at: row.created_at,
      device: deviceName(deviceFactsOf(row.claimed_device, row.device)),
    }));
  }
}

function factsOf(row: {
  id: string;
  version: string | null;
  ci_commit: string | null;
  created_at: string;
}): ExecutionFacts {
  return { id: row.id, version: row.version, commit: row.ci_commit, createdAt: row.created_at };
}

function exampleOf(row: {
  execution_id: string;
  device_run_id: string;
  attempt: number | string;
  seq: number | string;
  test_id: string | null;
  classname: string;
  name: string;
  status: string;
  message: string | null;
  details: string | null;
}): ExampleCase {
  return {
    executionId: row.execution_id,
    deviceRunId: row.device_run_id,
    attempt: Number(row.attempt),
    seq: Number(row.seq),
    testId: row.test_id,
    classname: row.classname,
    name: row.name,
    status: row.status,
    message: row.message,
    details: row.details,
  };
}
