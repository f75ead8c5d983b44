/**
 * The failure groups of an execution's failed tests (API.md §16), read from the signature the failures feature
 * stores on each failed test case when it is recorded (test_cases.failure_signature, migration 0033; written by
 * device-runs/test-cases-query.ts with features/failures/failure-signature.ts). Read here, never written: the
 * report names each failure's group; GET /v1/failures lists them across runs.
 */
import type { Kysely } from "kysely";
import type { Database } from "../../db/schema.ts";
import { failureSignature } from "../failures/index.ts";
import type { FailureGroupRef, FailureGroupsOfExecution } from "./report-model.ts";

export class StoredFailureGroups implements FailureGroupsOfExecution {
  constructor(private readonly db: Kysely<Database>) {}

  async ofExecution(
    _organizationId: string,
    executionId: string,
  ): Promise<ReadonlyMap<string, FailureGroupRef>> {
    // The execution was found in the caller's organization already (ExecutionsService.get, report-source.ts).
    const rows = await this.db
      .selectFrom("test_cases")
      .innerJoin("device_runs", "device_runs.id", "test_cases.device_run_id")
      .select([
        "device_runs.position as position",
        "device_runs.shard as shard",
        "test_cases.test_id as test_id",
        "test_cases.failure_signature as signature",
        "test_cases.message as message",
        "test_cases.details as details",
      ])
      .where("device_runs.execution_id", "=", executionId)
      .where("test_cases.failure_signature", "is not", null)
      // The test's last try is the one its failure is shown from: later rows replace earlier ones below.
      .orderBy("test_cases.attempt")
      .orderBy("test_cases.seq")
      .execute();
    const groups = new Map<string, FailureGroupRef>();
    for (const row of rows) {
      if (!row.signature || !row.test_id) continue;
      // The title as GET /v1/failures makes it (failures.service.ts titleOf): from the failure's own text.
      const title =
        failureSignature({ message: row.message, details: row.details, packageNames: [] })?.title ??
        "(no message)";
      groups.set(`${Number(row.position)}/${Number(row.shard)}/${row.test_id}`, {
        signature: row.signature,
        title,
      });
    }
    return groups;
  }
}
