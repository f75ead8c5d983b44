import type { TestPlansService } from "../testplans/testplans.service.ts";
import type { QuarantineRecord, QuarantineRepo } from "./quarantine.repo.ts";
import type { TestHistoryRepo } from "./test-history.repo.ts";
import { byFailuresThenName, type TestHistory, testHistories } from "./test-history.ts";

type LastRun = "last_status" | "last_execution_id" | "last_run_at" | "first_seen_at";

/**
 * A test of GET /v1/tests: its history, and its quarantine if it has one. A quarantined test that did not run
 * in the window has no last run (those fields null, runs 0): listed all the same, so that it can be found and
 * released where it was quarantined.
 */
export interface ListedTest extends Omit<TestHistory, LastRun> {
  last_status: TestHistory["last_status"] | null;
  last_execution_id: string | null;
  last_run_at: string | null;
  first_seen_at: string | null;
  quarantined: boolean;
  quarantine: QuarantineRecord | null;
}

/** How many plans' histories an instance keeps computed: the plans people are looking at right now. */
const cachedPlans = 8;

/**
 * A plan's test history, computed once per state of its window. The window's executions are read every time
 * (one index range scan); their test cases, the expensive part (100,000 rows for 5,000 tests × 20 runs), only
 * when the window changed: a finished execution's results no longer change, so the same executions give the
 * same history. Keyed by the executions themselves, the cache is right on every instance without telling the
 * others anything; a run's page and every page of the list after the first read it from memory.
 */
export class TestHistoryService {
  private readonly cache = new Map<string, { key: string; histories: TestHistory[] }>();

  constructor(
    private readonly repo: TestHistoryRepo,
    private readonly plans: TestPlansService,
    private readonly quarantines: QuarantineRepo,
  ) {}

  /**
   * The plan's tests with their history and quarantine. Quarantines change without a run finishing, so they
   * are read every time (one index range scan) and laid over the cached histories.
   */
  async list(organizationId: string, testPlanId: string, size: number): Promise<ListedTest[]> {
    const [histories, quarantines] = await Promise.all([
      this.histories(organizationId, testPlanId, size),
      this.quarantines.ofPlan(organizationId, testPlanId),
    ]);
    const listed: ListedTest[] = histories.map((history) => {
      const quarantine = quarantines.get(history.id) ?? null;
      return { ...history, quarantined: quarantine !== null, quarantine };
    });
    const inWindow = new Set(histories.map((history) => history.id));
    const notRun = [...quarantines.values()].filter((quarantine) => !inWindow.has(quarantine.testId));
    if (notRun.length === 0) return listed;
    return [...listed, ...notRun.map(notRunInWindow)].sort(byFailuresThenName);
  }

  private async histories(organizationId: string, testPlanId: string, size: number): Promise<TestHistory[]> {
    // Another organization's plan, or none: 404 like GET /testplans/{id}.
    await this.plans.get(organizationId, testPlanId);
    const window = await this.repo.window(organizationId, testPlanId, size);
    const key = window.map((execution) => execution.id).join(",");
    const slot = `${testPlanId}:${size}`;
    const cached = this.cache.get(slot);
    if (cached?.key === key) {
      // Most recently used last: the first entry is the one to drop.
      this.cache.delete(slot);
      this.cache.set(slot, cached);
      return cached.histories;
    }
    const histories = testHistories(
      testPlanId,
      window,
      await this.repo.finalCases(window.map((execution) => execution.id)),
    );
    this.cache.delete(slot);
    this.cache.set(slot, { key, histories });
    if (this.cache.size > cachedPlans) this.cache.delete(this.cache.keys().next().value as string);
    return histories;
  }
}

function notRunInWindow(quarantine: QuarantineRecord): ListedTest {
  return {
    id: quarantine.testId,
    classname: quarantine.classname,
    name: quarantine.name,
    runs: 0,
    failures: 0,
    flaky_runs: 0,
    flaky_rate: 0,
    p50_ms: null,
    p80_ms: null,
    last_status: null,
    last_execution_id: null,
    last_run_at: null,
    first_seen_at: null,
    new: false,
    quarantined: true,
    quarantine,
  };
}
