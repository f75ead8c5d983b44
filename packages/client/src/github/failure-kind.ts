import type { TestCase } from "../sdk/models.ts";
import type { ExecutionGroups, FailureGroup, TestHistory } from "./failure-groups.ts";

/**
 * What a failed (or flaky) test's failure is, as the check run's annotation says it (API.md §16): new (its group
 * first seen in this execution), known (seen before in the plan: where first), flaky (passed on a retry, or flaky
 * in its history) or quarantined (it does not fail the run).
 */
export type FailureKind =
  | { kind: "quarantined" }
  | { kind: "flaky"; why: string }
  | { kind: "new"; why: string }
  | { kind: "known"; why: string; firstSeen?: FailureGroup["first_seen"] };

/** A test case as the checks need it: the server's TestCase, and its failure signature once the server sends it. */
export type ReportedTest = TestCase & { signature?: string | null };

function shortCommit(commit: string | null | undefined) {
  return commit ? commit.slice(0, 7) : undefined;
}

/** Where a group was first seen, in words: "ex_… (version 1.2.2, commit abc1234, 2026-11-20)". */
export function seenAtText(seen: FailureGroup["first_seen"]): string {
  const details = [
    seen.version ? `version ${seen.version}` : undefined,
    shortCommit(seen.commit) ? `commit ${shortCommit(seen.commit)}` : undefined,
    seen.at ? seen.at.slice(0, 10) : undefined,
  ].filter(Boolean);
  return `${seen.execution_id}${details.length ? ` (${details.join(", ")})` : ""}`;
}

/**
 * A failure's kind. Quarantine first (the run did not fail for it), then flakiness, then whether its failure
 * group is new: from the group (`groups`, API.md §16) when the server groups failures and sent the test's
 * signature, else from the test's own history in the plan (`history`): it failed in an earlier execution or not.
 */
export function failureKind(
  test: ReportedTest,
  executionId: string,
  groups: ExecutionGroups | undefined,
  history: TestHistory | undefined,
): FailureKind {
  if (test.quarantined) return { kind: "quarantined" };
  const tries = test.attempts ?? [];
  if (
    test.flaky ||
    (test.status === "passed" && tries.some((t) => t.status === "failed" || t.status === "errored"))
  ) {
    return { kind: "flaky", why: `passed on a retry (${tries.length} tries)` };
  }
  if (history && history.flaky_runs > 0) {
    return {
      kind: "flaky",
      why: `flaky in its history: passed after failing in ${history.flaky_runs} of the plan's last ${history.runs} executions`,
    };
  }
  const group = (test.signature && groups?.bySignature.get(test.signature)) || groups?.byTest.get(test.id);
  if (group) {
    if (group.first_seen.execution_id === executionId)
      return { kind: "new", why: "its failure group was first seen in this execution" };
    return {
      kind: "known",
      why: `its failure group was first seen in ${seenAtText(group.first_seen)}`,
      firstSeen: group.first_seen,
    };
  }
  if (history) {
    const earlier = history.failures - (history.last_execution_id === executionId ? 1 : 0);
    if (earlier > 0)
      return {
        kind: "known",
        why: `it failed in ${earlier} earlier of the plan's last ${history.runs} executions`,
      };
  }
  return { kind: "new", why: "it did not fail in the plan's earlier executions" };
}
