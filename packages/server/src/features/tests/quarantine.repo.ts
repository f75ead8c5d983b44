import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";

/** A test as its cases name it: what a quarantine keeps beside the id, so it reads without its history. */
export interface ReportedTest {
  testId: string;
  testPlanId: string;
  classname: string;
  name: string;
}

export interface QuarantineRecord extends ReportedTest {
  reason: string;
  /** The actor as the audit log names it: a person's email or a client's ID. */
  quarantinedBy: string;
  quarantinedAt: string;
}

type Row = Database["test_quarantines"];

const toRecord = (row: Row): QuarantineRecord => ({
  testId: row.test_id,
  testPlanId: row.test_plan_id,
  classname: row.classname,
  name: row.name,
  reason: row.reason,
  quarantinedBy: row.quarantined_by,
  quarantinedAt: row.quarantined_at,
});

/** The organization's quarantined tests, and the reported tests they can be made of. */
export class QuarantineRepo {
  constructor(private readonly db: Kysely<Database>) {}

  /**
   * A test an agent has reported in the organization (any case of it will do: they all carry the same plan
   * and names). One probe of test_cases_test_id_idx; the organization is checked on the case's execution, so
   * another organization's test is as unknown as one never reported.
   */
  async reportedTest(organizationId: string, testId: string): Promise<ReportedTest | undefined> {
    const row = await this.db
      .selectFrom("test_cases")
      .innerJoin("device_runs", "device_runs.id", "test_cases.device_run_id")
      .innerJoin("executions", "executions.id", "device_runs.execution_id")
      .select(["executions.test_plan_id", "test_cases.classname", "test_cases.name"])
      .where("test_cases.test_id", "=", testId)
      .where("executions.organization_id", "=", organizationId)
      // Test cases of WebDriver sessions (no plan) cannot be quarantined: they have no history to keep.
      .where("executions.test_plan_id", "is not", null)
      .$narrowType<{ test_plan_id: string }>()
      .limit(1)
      .executeTakeFirst();
    return row && { testId, testPlanId: row.test_plan_id, classname: row.classname, name: row.name };
  }

  /**
   * Quarantines the test, or changes the reason of its quarantine: one statement, so two people doing it at
   * once both succeed and the last reason stands. Who quarantined it and since when stay those of the first
   * time (how long a test has been quarantined is what a team reviews); every change is in the audit log.
   * Returns the quarantine and the reason it replaced, if any.
   */
  async put(
    organizationId: string,
    quarantine: QuarantineRecord,
  ): Promise<{ quarantine: QuarantineRecord; previousReason: string | undefined }> {
    const previous = await this.get(organizationId, quarantine.testId);
    const row = await this.db
      .insertInto("test_quarantines")
      .values({
        organization_id: organizationId,
        test_id: quarantine.testId,
        test_plan_id: quarantine.testPlanId,
        classname: quarantine.classname,
        name: quarantine.name,
        reason: quarantine.reason,
        quarantined_by: quarantine.quarantinedBy,
        quarantined_at: quarantine.quarantinedAt,
      })
      .onConflict((conflict) =>
        conflict.columns(["organization_id", "test_id"]).doUpdateSet({ reason: quarantine.reason }),
      )
      .returningAll()
      .executeTakeFirstOrThrow();
    return { quarantine: toRecord(row), previousReason: previous?.reason };
  }

  async get(organizationId: string, testId: string): Promise<QuarantineRecord | undefined> {
    const row = await this.db
      .selectFrom("test_quarantines")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .where("test_id", "=", testId)
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** Releases the test; returns the quarantine it ended, undefined when it was not quarantined. */
  async remove(organizationId: string, testId: string): Promise<QuarantineRecord | undefined> {
    const row = await this.db
      .deleteFrom("test_quarantines")
      .where("organization_id", "=", organizationId)
      .where("test_id", "=", testId)
      .returningAll()
      .executeTakeFirst();
    return row && toRecord(row);
  }

  /** The plan's quarantined tests, by test id (an index range scan on test_quarantines_plan_idx). */
  async ofPlan(organizationId: string, testPlanId: string): Promise<Map<string, QuarantineRecord>> {
    const rows = await this.db
      .selectFrom("test_quarantines")
      .selectAll()
      .where("organization_id", "=", organizationId)
      .where("test_plan_id", "=", testPlanId)
      .execute();
    return new Map(rows.map((row) => [row.test_id, toRecord(row)]));
  }
}
