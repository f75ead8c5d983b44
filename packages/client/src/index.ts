export { type ApkIdentity, readApkIdentity } from "./apk/apk-identity.ts";
export { type CliConfig, type ConnectionFlags, resolveConfig } from "./cli/config.ts";
export { UsageError } from "./cli/exit-codes.ts";
export { packageVersion } from "./cli/version.ts";
export type {
  AgentApi,
  AgentDevice,
  AgentEvent,
  AgentJob,
  ArtifactUploaded,
  ClaimRequest,
  CompleteRequest,
  CompleteResult,
  EventsResult,
  HeartbeatResult,
  RunStatus,
  ShardBatch,
  ShardTest,
  ShardTestsResult,
} from "./sdk/agent-api.ts";
export type { components, operations, paths } from "./sdk/api.generated.ts";
export { testbayOwnedCapabilities } from "./sdk/appium-owned-capabilities.ts";
export { type Download, Testbay, type TestbayOptions } from "./sdk/client.ts";
export { type Clock, FakeClock, type Random, seededRandom, systemClock } from "./sdk/clock.ts";
export {
  type ErrorCode,
  type FailedExecution,
  type HttpStatusCode,
  notFoundHint,
  type Problem,
  TestbayApiError,
  TestbayGaveUpError,
  TestbayNetworkError,
} from "./sdk/errors.ts";
export * from "./sdk/models.ts";
export { defaultPacingPolicy, Pacer, type PacingPolicy } from "./sdk/pacing.ts";
export { type CtrfReport, type ReportsApi, reportsApi } from "./sdk/reports.ts";
export {
  backoffMs,
  defaultRetryOptions,
  isRetryableStatus,
  mayRetryNetworkError,
  parseRetryAfter,
  type RetryEvent,
  type RetryOptions,
  RetryPolicy,
} from "./sdk/retry-policy.ts";
export {
  type CreateSchedule,
  type Schedule,
  type ScheduleLastResult,
  type SchedulesApi,
  schedulesApi,
  type UpdateSchedule,
} from "./sdk/schedules.ts";
export { TokenCache, type TokenResponse } from "./sdk/token-cache.ts";
export type { ResponseEvent } from "./sdk/transport.ts";
export {
  compareTestPackage,
  differentTestPackageError,
  sha256File,
  type TestPackageComparison,
  type TestPackageUploadOptions,
  type TestPackageUploadResult,
  type UploadOptions,
  type UploadOutcome,
  type UploadProgress,
  type UploadResult,
} from "./sdk/upload.ts";
