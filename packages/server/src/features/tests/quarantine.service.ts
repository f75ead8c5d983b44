import { type Clock, isoTime } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import type { Actor, AuditLog } from "../audit/index.ts";
import type { QuarantineRecord, QuarantineRepo, ReportedTest } from "./quarantine.repo.ts";

/**
 * Quarantine of known-flaky tests (API.md §6): a quarantined test still runs and is reported, but its failure
 * does not fail the execution while someone fixes it. Who quarantined it and why is kept and audited.
 */
export class QuarantineService {
  constructor(
    private readonly repo: QuarantineRepo,
    private readonly audit: AuditLog,
    private readonly clock: Clock,
  ) {}

  /** Quarantines a test an agent has reported in the organization, or changes its reason if it is already. */
  async quarantine(
    organizationId: string,
    testId: string,
    reason: string,
    actor: Actor,
  ): Promise<QuarantineRecord> {
    const test = await this.reportedTest(organizationId, testId);
    const { quarantine, previousReason } = await this.repo.put(organizationId, {
      ...test,
      reason,
      quarantinedBy: actor.id,
      quarantinedAt: isoTime(this.clock.now()),
    });
    await this.audit.record({
      organizationId,
      actor,
      action: "test.quarantined",
      target: { type: "test", id: testId },
      details: {
        test_plan_id: test.testPlanId,
        classname: test.classname,
        name: test.name,
        reason,
        ...(previousReason === undefined ? {} : { previous_reason: previousReason }),
      },
    });
    return quarantine;
  }

  /**
   * Releases a test. Releasing one that is not quarantined changes nothing and succeeds (a retried DELETE, or
   * two people releasing it at once); an id no agent ever reported in the organization is refused, as a typo
   * is more likely than a test nobody has seen.
   */
  async release(organizationId: string, testId: string, actor: Actor): Promise<void> {
    const ended = await this.repo.remove(organizationId, testId);
    if (!ended) {
      await this.reportedTest(organizationId, testId);
      return;
    }
    await this.audit.record({
      organizationId,
      actor,
      action: "test.unquarantined",
      target: { type: "test", id: testId },
      details: {
        test_plan_id: ended.testPlanId,
        classname: ended.classname,
        name: ended.name,
        reason: ended.reason,
      },
    });
  }

  /** The plan's quarantined tests by id: GET /v1/tests and an execution's tests show them. */
  ofPlan(organizationId: string, testPlanId: string): Promise<Map<string, QuarantineRecord>> {
    return this.repo.ofPlan(organizationId, testPlanId);
  }

  private async reportedTest(organizationId: string, testId: string): Promise<ReportedTest> {
    const test = await this.repo.reportedTest(organizationId, testId);
    if (!test) {
      throw new ApiError("test_not_found", {
        detail: `No test with id ${testId} has been reported in this organization.`,
      });
    }
    return test;
  }
}
