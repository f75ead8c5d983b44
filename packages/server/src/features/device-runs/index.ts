export {
  type AttemptEnd,
  attemptStatus,
  type FinalStatus,
  isFinal,
  lapsedEnd,
  maxAttemptsWithHandBacks,
  reportedEnd,
} from "./attempt-outcome.ts";
export { nextRun } from "./claim-query.ts";
export { DeviceRuns } from "./device-runs.ts";
export { addSummaries, executionStatus, type RunTally, tally } from "./execution-outcome.ts";
export { attemptSummary, emptySummary, isFlaky, type TestReport } from "./test-summary.ts";
export type { AgentDevice, ClaimedRun, ClaimRequest, Completion, LeasedRun } from "./types.ts";
