import type { Clock } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import { failureSignature } from "./failure-signature.ts";
import type {
  ExampleCase,
  FailureFilter,
  FailuresRepo,
  GroupInPlan,
  Occurrence,
  OccurrencePosition,
} from "./failures.repo.ts";

export type FailureStatus = "new" | "ongoing" | "fixed";

/** How long a group is `new` after it was first seen (API.md §16). */
const newForMs = 24 * 60 * 60 * 1000;
/** How many of the plan's executions since a group was last seen its tests must pass in to make it `fixed`. */
const passesToFix = 3;
/** The lines of an example's stack shown with it. */
const stackHeadLines = 10;

export interface Seen {
  execution_id: string;
  version: string | null;
  commit: string | null;
  at: string;
}

export interface FailureGroup {
  signature: string;
  title: string;
  status: FailureStatus;
  occurrences: number;
  tests: number;
  executions: number;
  first_seen: Seen;
  last_seen: Seen;
  example: {
    execution_id: string;
    test_id: string | null;
    message: string | null;
    stack_head: string | null;
  };
}

export interface ListQuery extends FailureFilter {
  since?: string;
  status?: FailureStatus;
  limit: number;
  /** The last group of the previous page: its last_seen time and signature. */
  after?: { at: string; signature: string };
}

/** A group over all its plans (within the filter), before its page is looked up. */
interface Merged {
  signature: string;
  plans: GroupInPlan[];
  occurrences: number;
  first: GroupInPlan["first"];
  last: GroupInPlan["last"];
}

/**
 * Failure groups (API.md §16): the failed tests of an organization grouped by signature, newest last seen
 * first, with where each was first and last seen, an example, and whether it is new, ongoing or fixed.
 */
export class FailuresService {
  constructor(
    private readonly repo: FailuresRepo,
    private readonly clock: Clock,
  ) {}

  async list(
    query: ListQuery,
  ): Promise<{ items: FailureGroup[]; next_cursor: { at: string; signature: string } | null }> {
    let groups = merge(await this.repo.groups(query));
    if (query.since !== undefined) {
      const since = query.since;
      groups = groups.filter((group) => group.last.at >= since);
    }
    groups.sort((a, b) =>
      a.last.at === b.last.at ? compare(a.signature, b.signature) : compare(b.last.at, a.last.at),
    );
    const after = query.after;
    if (after) {
      groups = groups.filter(
        (group) =>
          group.last.at < after.at || (group.last.at === after.at && group.signature > after.signature),
      );
    }
    let page: Array<Merged & { status: FailureStatus }>;
    let more: boolean;
    if (query.status === undefined) {
      const slice = groups.slice(0, query.limit);
      page = await this.withStatus(query.organizationId, slice);
      more = groups.length > query.limit;
    } else {
      // The status is the filter: every group's is needed (the fixed check reads only groups old enough).
      const matching = (await this.withStatus(query.organizationId, groups)).filter(
        (g) => g.status === query.status,
      );
      page = matching.slice(0, query.limit);
      more = matching.length > query.limit;
    }
    const executions = await this.repo.executionCounts(
      query,
      page.map((group) => group.signature),
    );
    const items = await this.view(page, executions);
    const last = page.at(-1);
    return { items, next_cursor: more && last ? { at: last.last.at, signature: last.signature } : null };
  }

  /** A group's occurrences, newest first; 404 when the organization has none (within the filter). */
  async occurrences(
    filter: FailureFilter,
    signature: string,
    limit: number,
    after: OccurrencePosition | undefined,
  ): Promise<{ title: string; items: Occurrence[]; next: OccurrencePosition | null }> {
    const rows = await this.repo.occurrences(filter, signature, limit + 1, after);
    if (rows.length === 0 && after === undefined) {
      throw new ApiError("failure_group_not_found", {
        detail: `No failure with signature ${signature} was recorded in your organization${filter.testPlanId || filter.packageName ? " within the filter" : ""}.`,
      });
    }
    const items = rows.slice(0, limit);
    const last = items.at(-1);
    return {
      title: items[0] ? titleOf(items[0]) : signature,
      items,
      next:
        rows.length > limit && last
          ? { at: last.at, deviceRunId: last.deviceRunId, attempt: last.attempt, seq: last.seq }
          : null,
    };
  }

  /**
   * new: first seen in the last 24 h; fixed (which wins over new): in each plan it was seen in, its tests passed
   * in each of the plan's last 3 finished executions, all after it was last seen there; ongoing otherwise.
   */
  private async withStatus(
    organizationId: string,
    groups: readonly Merged[],
  ): Promise<Array<Merged & { status: FailureStatus }>> {
    const fixed = await this.fixedSignatures(organizationId, groups);
    const newSince = new Date(this.clock.now() - newForMs).toISOString();
    return groups.map((group) => ({
      ...group,
      status: fixed.has(group.signature) ? "fixed" : group.first.at >= newSince ? "new" : "ongoing",
    }));
  }

  private async fixedSignatures(organizationId: string, groups: readonly Merged[]): Promise<Set<string>> {
    // Per plan: the groups last seen there before its 3rd newest finished execution are the only candidates.
    const byPlan = new Map<string, GroupInPlan[]>();
    for (const group of groups) {
      for (const inPlan of group.plans)
        byPlan.set(inPlan.testPlanId, [...(byPlan.get(inPlan.testPlanId) ?? []), inPlan]);
    }
    const fixedInPlan = new Set<string>();
    for (const [planId, inPlan] of byPlan) {
      const lastThree = await this.repo.lastFinished(organizationId, planId, passesToFix);
      const oldest = lastThree.at(-1);
      if (lastThree.length < passesToFix || !oldest) continue;
      const candidates = inPlan.filter((group) => group.last.at < oldest.createdAt);
      if (candidates.length === 0) continue;
      const allTests = [...new Set(candidates.flatMap((group) => group.testIds))];
      const passed = await this.repo.passed(
        lastThree.map((e) => e.id),
        allTests,
      );
      for (const group of candidates) {
        const groupTests = group.testIds;
        const allPassed =
          groupTests.length > 0 &&
          lastThree.every((execution) => groupTests.every((test) => passed.has(`${execution.id} ${test}`)));
        if (allPassed) fixedInPlan.add(`${planId} ${group.signature}`);
      }
    }
    return new Set(
      groups
        .filter((group) => group.plans.every((p) => fixedInPlan.has(`${p.testPlanId} ${group.signature}`)))
        .map((group) => group.signature),
    );
  }

  private async view(
    page: ReadonlyArray<Merged & { status: FailureStatus }>,
    executionCounts: ReadonlyMap<string, number>,
  ): Promise<FailureGroup[]> {
    const executions = await this.repo.executions(
      page.flatMap((g) => [g.first.executionId, g.last.executionId]),
    );
    const examples = await this.repo.cases(page.map((g) => g.last));
    const exampleOf = new Map(examples.map((c) => [`${c.deviceRunId} ${c.attempt} ${c.seq}`, c]));
    const seen = (executionId: string, at: string): Seen => {
      const execution = executions.get(executionId);
      return {
        execution_id: executionId,
        version: execution?.version ?? null,
        commit: execution?.commit ?? null,
        at,
      };
    };
    return page.map((group) => {
      const example = exampleOf.get(`${group.last.deviceRunId} ${group.last.attempt} ${group.last.seq}`);
      return {
        signature: group.signature,
        title: example ? titleOf(example) : group.signature,
        status: group.status,
        occurrences: group.occurrences,
        // Test ids belong to one plan each: the plans' sets add up.
        tests: group.plans.reduce((sum, inPlan) => sum + inPlan.testIds.length, 0),
        executions: executionCounts.get(group.signature) ?? 0,
        first_seen: seen(group.first.executionId, group.first.at),
        last_seen: seen(group.last.executionId, group.last.at),
        example: {
          execution_id: group.last.executionId,
          test_id: example?.testId ?? null,
          message: example?.message ?? null,
          stack_head: stackHead(example?.details ?? null),
        },
      };
    });
  }
}

/** The group's title, made again from a failure of it (the title does not depend on the package names). */
export function titleOf(example: Pick<ExampleCase, "message" | "details">): string {
  return (
    failureSignature({ message: example.message, details: example.details, packageNames: [] })?.title ??
    "(no message)"
  );
}

export function stackHead(details: string | null): string | null {
  if (details === null) return null;
  const lines = details.split(/\r?\n/);
  return lines.slice(0, stackHeadLines).join("\n");
}

function merge(rows: readonly GroupInPlan[]): Merged[] {
  const groups = new Map<string, Merged>();
  for (const row of rows) {
    const group = groups.get(row.signature);
    if (!group) {
      groups.set(row.signature, { ...row, plans: [row] });
      continue;
    }
    group.plans.push(row);
    group.occurrences += row.occurrences;
    if (`${row.first.at} ${row.first.executionId}` < `${group.first.at} ${group.first.executionId}`)
      group.first = row.first;
    if (`${row.last.at} ${row.last.executionId}` > `${group.last.at} ${group.last.executionId}`)
      group.last = row.last;
  }
  return [...groups.values()];
}

const compare = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
