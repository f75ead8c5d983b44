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
export { createDeviceRuns } from "./device-runs.feature.ts";
export { DeviceRuns, type Ended } from "./device-runs.ts";
export {
  admits,
  type DeviceSelectors,
  isClaimable,
  isComparableVersion,
  isInService,
  meetsSelectors,
  selectorRules,
  selectorsOf,
  setSelectors,
  versionKey,
} from "./device-selectors.ts";
export { enqueueRuns, type RunToQueue } from "./enqueue-query.ts";
export { addSummaries, executionStatus, type RunTally, tally } from "./execution-outcome.ts";
export { expectedDurations } from "./expected-durations.ts";
export type { HeldRun } from "./held-run.ts";
export { organizationLimit } from "./org-limits.ts";
export { osVersionMatches, osVersionPrefixes, osVersionPrefixShown } from "./os-version-prefix.ts";
export {
  maxShards,
  type RunShard,
  runsOnShard,
  type ShardableStep,
  shardCount,
  shardingOf,
  splitsTests,
  stepShards,
} from "./plan-shards.ts";
export {
  deviceFits,
  fitsEntry,
  type RunRequirements,
  requirementsOf,
  runnableSets,
  stepTypeSet,
} from "./requirements.ts";
export type { ListingResult, NextBatchResult } from "./shard-batches.ts";
export type { ListedTest } from "./shard-plan.ts";
export { insertTestCases } from "./test-cases-query.ts";
export { attemptSummary, emptySummary, isFlaky, type Summary, type TestReport } from "./test-summary.ts";
export type {
  AgentDevice,
  ClaimedRun,
  ClaimRequest,
  Completion,
  DeviceState,
  LeasedRun,
} from "./types.ts";
