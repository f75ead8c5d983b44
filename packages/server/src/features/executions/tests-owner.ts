/**
 * What a test's ID is made from besides its names (features/tests/test-id.ts): the test plan, whose runs share
 * their tests' histories. A WebDriver session (API.md §12) has no plan, so what it reports, if anything, is its
 * own: its execution ID stands in for the plan.
 */
export function testsOwnerOf(execution: { id: string; testPlanId: string | null }): string {
  return execution.testPlanId ?? execution.id;
}
