/**
 * Table types as Kysely sees them. Timestamps are ISO-8601 UTC strings with milliseconds in both dialects,
 * so they compare and sort the same on SQLite and PostgreSQL.
 */
import type { Generated } from "kysely";

export interface Database {
  organizations: OrganizationsTable;
  clients: ClientsTable;
  signing_keys: SigningKeysTable;
  apps: AppsTable;
  app_versions: AppVersionsTable;
  test_packages: TestPackagesTable;
  version_files: VersionFilesTable;
  test_plans: TestPlansTable;
  executions: ExecutionsTable;
  device_runs: DeviceRunsTable;
  idempotency_keys: IdempotencyKeysTable;
  device_run_attempts: DeviceRunAttemptsTable;
  device_run_selector_values: DeviceRunSelectorValuesTable;
  step_results: StepResultsTable;
  test_cases: TestCasesTable;
  failure_groups: FailureGroupsTable;
  log_lines: LogLinesTable;
  log_chunks: LogChunksTable;
  artifacts: ArtifactsTable;
  agents: AgentsTable;
  users: UsersTable;
  sessions: SessionsTable;
  audit_events: AuditEventsTable;
  test_quarantines: TestQuarantinesTable;
  shard_plans: ShardPlansTable;
  test_batches: TestBatchesTable;
  events: EventsTable;
  webhooks: WebhooksTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_attempts: WebhookAttemptsTable;
  webdriver_sessions: WebdriverSessionsTable;
  schedules: SchedulesTable;
}

export interface OrganizationsTable {
  id: string;
  name: string;
  created_at: string;
  /** How many of its device runs may run at once (`org set-limits`, migration 0032); null: no limit. */
  max_concurrent_device_runs: Generated<number | null>;
  /** Bumped by each claim of a limited organization (device-runs/org-limits.ts). */
  claim_gate: Generated<number>;
}

export type ClientRole = "ci" | "agent" | "admin";

export interface ClientsTable {
  id: string;
  organization_id: string;
  role: ClientRole;
  /** `scrypt$N$r$p$salt$hash`; the secret itself is never stored. */
  secret_hash: string;
  created_at: string;
  disabled_at: string | null;
  /** Tokens issued before this are refused: set by `client rotate` and `client enable`. */
  tokens_not_before: string | null;
  /** What people call it ("nightly CI"), shown beside its ID; null when it was given none (migration 0024). */
  name: string | null;
  /** 1: an agent client that claims every organization's runs (`--all-orgs`, migration 0032). */
  all_organizations: Generated<number>;
}

export interface SigningKeysTable {
  id: string;
  algorithm: string;
  private_key_pem: string;
  created_at: string;
}

export type Platform = "android" | "ios";

export interface AppsTable {
  id: string;
  organization_id: string;
  package_name: string;
  package_name_folded: string;
  platform: Platform;
  display_name: string | null;
  created_at: string;
}

export interface AppVersionsTable {
  id: string;
  app_id: string;
  version: string;
  /** bigint: pg returns it as a string, SQLite as a number; read it with Number(). */
  size_bytes: number | string;
  sha256: string;
  blob_key: string;
  /** JSON text of the parsed BinaryMetadata. */
  binary: string;
  created_at: string;
  /** Set when the version was deleted (by an admin or by retention): its binary is gone, its name freed. */
  deleted_at: string | null;
}

/** A version's test package (API.md §4b); at most one per version. */
export interface TestPackagesTable {
  app_version_id: string;
  format: string;
  size_bytes: number | string;
  sha256: string;
  blob_key: string;
  /** JSON text of what was parsed from the package (runner, target package, SDK levels). */
  test: string;
  created_at: string;
}

/** Files uploaded beside a version for its tests (API.md §14, migration 0030), by name within the version. */
export interface VersionFilesTable {
  app_version_id: string;
  name: string;
  size_bytes: number | string;
  sha256: string;
  blob_key: string;
  created_at: string;
}

export type TestPlanState = "active" | "archived" | "deleted";

export interface TestPlansTable {
  id: string;
  organization_id: string;
  app_id: string;
  name: string;
  state: TestPlanState;
  /** JSON text: DeviceSpec[] */
  devices: string;
  /** JSON text: Step[] */
  steps: string;
  timeout_seconds: number;
  max_attempts: number;
  created_at: string;
  updated_at: string;
  state_changed_at: string | null;
}

export type ExecutionStatus = "queued" | "running" | "passed" | "failed" | "errored" | "cancelled";

export type ExecutionKind = "run" | "session";

export interface ExecutionsTable {
  id: string;
  organization_id: string;
  /** Null for a WebDriver session (kind "session", migration 0026): it has no test plan. */
  test_plan_id: string | null;
  /** Null for a WebDriver session without a registered app (migration 0026). */
  app_version_id: string | null;
  package_name: string | null;
  version: string | null;
  /** "run" (a test plan triggered) or "session" (a WebDriver session, API.md §12). */
  kind: Generated<ExecutionKind>;
  status: ExecutionStatus;
  /** JSON text: the plan's name, devices, steps, timeout and attempts when it was triggered. */
  plan: string;
  /** JSON text: Record<string, string> */
  env: string;
  /** JSON text: {tests, passed, failed, skipped, flaky} */
  summary: string;
  cancel_requested: number;
  triggered_by: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Where the run came from in the caller's CI (API.md §6); null when the trigger did not say. */
  ci_provider: string | null;
  ci_branch: string | null;
  ci_commit: string | null;
  ci_pull_request: string | null;
  ci_build_url: string | null;
  /** high, normal or low (API.md §15, migration 0032). */
  priority: Generated<ExecutionPriority>;
}

export type ExecutionPriority = "high" | "normal" | "low";

export interface DeviceRunsTable {
  id: string;
  execution_id: string;
  position: number;
  device: string | null;
  status: ExecutionStatus;
  attempt: number;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  /** Its execution's priority as the claim orders it: 0 high, 1 normal, 2 low (migration 0032). */
  priority_rank: Generated<number>;
  /** Null only for rows written before migration 0006 and not yet backfilled (none after it ran). */
  organization_id: string | null;
  required_platform: string | null;
  required_model: string | null;
  /** A plan's os_version: the device's, exactly. */
  required_os_version: string | null;
  /** A WebDriver session's appium:platformVersion: the start of the device's OS version (migration 0028). */
  required_os_version_prefix: string | null;
  /** The plan's step types, sorted and comma-joined: "inspect,shell". */
  needs: string | null;
  max_attempts: number | null;
  /** The current lease while running, else null. */
  lease_id: string | null;
  lease_expires_at: string | null;
  agent_id: string | null;
  /** JSON text: the agent's device the run is on (null on the host). */
  claimed_device: string | null;
  /** Why it ended as it did, when that is not obvious from the status (agent_lost, timeout, …). */
  reason: string | null;
  /** JSON text: the summary of the current attempt. */
  summary: string | null;
  /** Which shard of its device entry this run is (0..shard_count-1); 0 for an unsharded run. */
  shard: Generated<number>;
  /** How many device runs the entry's tests are split over: the largest `shards` among the plan's steps. */
  shard_count: Generated<number>;
  /** The agent's id of the claim that took the run (migration 2026-11-24-0021); null for older claims. */
  claim_id: string | null;
  /** A plan entry's selectors (API.md §13, migration 0029; device-runs/device-selectors.ts); null: any. */
  required_api_level_min: number | null;
  required_api_level_max: number | null;
  /** Version keys (device-selectors.ts versionKey), not the versions as written. */
  required_os_version_min: string | null;
  required_os_version_max: string | null;
  required_abi: string | null;
  /** 1: an emulator or simulator; 0: a real device; null: either. */
  required_emulator: number | null;
  /** How many models (any of) and labels (all of) the entry names: their rows in device_run_selector_values. */
  required_models: Generated<number>;
  required_labels: Generated<number>;
  /** JSON {count, reason}: how `shards: "auto"` chose the entry's device runs at trigger; null otherwise. */
  shards_planned: string | null;
  /** How long the agent took to make the device clean for this run (its latest attempt), as it reported. */
  setup_ms: number | null;
}

/** The models and labels a device run's entry names (migration 0029): what a claim looks the run's sets up in. */
export interface DeviceRunSelectorValuesTable {
  device_run_id: string;
  selector: "model" | "label";
  /** A model as devices name it, or a label as KEY=VALUE. */
  value: string;
}

export interface DeviceRunAttemptsTable {
  device_run_id: string;
  attempt: number;
  lease_id: string;
  agent_id: string;
  device: string | null;
  status: ExecutionStatus;
  reason: string | null;
  summary: string | null;
  started_at: string;
  finished_at: string | null;
}

export interface StepResultsTable {
  device_run_id: string;
  attempt: number;
  step_index: number;
  status: string;
  message: string | null;
  started_at: string;
  finished_at: string | null;
}

export type TestCaseStatus = "passed" | "failed" | "skipped" | "errored";

export interface TestCasesTable {
  device_run_id: string;
  attempt: number;
  seq: number;
  step_index: number;
  classname: string;
  name: string;
  status: TestCaseStatus;
  duration_ms: number | null;
  message: string | null;
  details: string | null;
  /** JSON array of the names of artifacts captured for this test case, null when none were named. */
  artifacts: string | null;
  /** How far into its video segment (the .mp4 among artifacts) the test failed, in ms; null when unknown. */
  video_offset_ms: number | null;
  /** Which try of the test within its attempt: 0 the first run, 1.. reruns (retry_failed_tests); null: unknown. */
  retry: number | null;
  /**
   * The test's id within its plan (testId() in features/tests/test-id.ts), set when the case is
   * stored; null only for rows written before migration 0017 and not yet backfilled (none after it ran).
   */
  test_id: string | null;
  /**
   * A failed or errored case's failure group (features/failures/failure-signature.ts, migration 0033), set when
   * the case is stored; null for passed and skipped cases and for failures stored before the migration.
   */
  failure_signature?: string | null;
}

/**
 * A failure group within one plan (API.md §16, migration 0035): its count and its first and last occurrence, kept
 * by features/failures/failure-groups.writer.ts as its test cases are stored. Timestamps are the executions'
 * created_at; the last occurrence's case (run, attempt, seq) is the group's example.
 */
export interface FailureGroupsTable {
  organization_id: string;
  test_plan_id: string;
  signature: string;
  package_name: string | null;
  occurrences: number;
  /** The tests it failed in: a JSON array of test ids (features/tests/test-id.ts), sorted. */
  test_ids: string;
  first_at: string;
  first_execution_id: string;
  last_at: string;
  last_execution_id: string;
  last_device_run_id: string;
  last_attempt: number;
  last_seq: number;
}

export interface LogLinesTable {
  device_run_id: string;
  attempt: number;
  seq: number;
  at: string;
  stream: string;
  line: string;
}

/** The index of a log chunk object in the blob store (see migration 2026-11-23-0007). */
export interface LogChunksTable {
  device_run_id: string;
  attempt: number;
  first_seq: number;
  last_seq: number;
  execution_id: string;
  blob_key: string;
  bytes: number | string;
  lines: number;
  truncated: number;
}

export interface ArtifactsTable {
  device_run_id: string;
  attempt: number;
  name: string;
  execution_id: string;
  size_bytes: number | string;
  sha256: string;
  content_type: string;
  blob_key: string;
  created_at: string;
}

/** An agent as last seen by its claims and heartbeats (GET /agents). */
export interface AgentsTable {
  organization_id: string;
  id: string;
  name: string;
  last_seen_at: string;
  /** Sorted, comma-joined step types: "inspect,shell". */
  step_types: string;
  /** JSON: the devices free at the agent's last claim. */
  devices: string;
  /** JSON: the devices the agent stopped offering after three infrastructure failures in a row. */
  drained_devices: string;
  /** JSON: the Appium version and drivers an agent started with --appium offers (API.md §12); null otherwise. */
  appium: string | null;
  /** 1: its last claim came from an `--all-orgs` agent client, so every organization sees it (migration 0034). */
  all_organizations: Generated<number>;
}

export interface IdempotencyKeysTable {
  client_id: string;
  key: string;
  fingerprint: string;
  status_code: number | null;
  content_type: string | null;
  body: string | null;
  created_at: string;
  expires_at: string;
}

/** What a person may do in the dashboard and, signed in, through /v1 (API.md §10). */
export type PersonRole = "viewer" | "member" | "admin";

/** People who sign in (API.md §10). */
export interface UsersTable {
  id: string;
  organization_id: string;
  /** As it was given when the account was created. */
  email: string;
  /** Lower case: unique within the organization (migration 0025), and what sign-in looks up. */
  email_folded: string;
  role: PersonRole;
  /** `scrypt$N$r$p$salt$hash`, as for client secrets; the password itself is never stored. */
  password_hash: string;
  created_at: string;
  /** A disabled person cannot sign in, and their sessions stop working at once. */
  disabled_at: string | null;
  /** The last successful sign-in (password or single sign-on); null before the first. */
  last_sign_in_at: string | null;
}

/** Signed-in sessions, shared by every instance on the database. */
export interface SessionsTable {
  /** SHA-256 (hex) of the session ID in the cookie; the ID itself is never stored. */
  id_hash: string;
  user_id: string;
  created_at: string;
  /** The session ends 12 h after this (sliding idle expiry). */
  last_seen_at: string;
}

/** Who did what: appended by the services that do it, read by GET /v1/audit. */
export interface AuditEventsTable {
  id: string;
  organization_id: string;
  created_at: string;
  /** `person` (signed in), `client` (x-api-key) or `server` (the admin CLI, or the server itself). */
  actor_type: string;
  /** The person's email, the client's ID, or `testbay-server`. */
  actor_id: string;
  /** `test_plan.created`, `execution.triggered`, `client.rotated`, … (features/audit/audit-log.ts). */
  action: string;
  target_type: string;
  target_id: string;
  /** JSON text: what else is worth knowing (a plan's name, a version, a role), or null. */
  details: string | null;
}

/** A test of an organization that does not fail its executions while it is fixed (migration 0017). */
export interface TestQuarantinesTable {
  organization_id: string;
  /** testId(test_plan_id, classname, name): one quarantine per test of the organization. */
  test_id: string;
  test_plan_id: string;
  classname: string;
  name: string;
  reason: string;
  /** Who quarantined it, as the audit log names actors: the person's email or the client's ID. */
  quarantined_by: string;
  quarantined_at: string;
}

export type ShardingMode = "duration" | "uniform";

/** A sharded step's plan: made by the first listing of its tests (migration 2026-11-24-0019). */
export interface ShardPlansTable {
  execution_id: string;
  /** The device entry (device_runs.position) whose shards share the plan. */
  position: number;
  step_index: number;
  sharding: ShardingMode;
  shard_count: number;
  /** JSON text: [{classname, name}], the distinct tests as first listed. */
  tests: string;
  test_count: number;
  batch_count: number;
  device_run_id: string;
  created_at: string;
}

export type TestBatchState = "queued" | "running" | "done";

/** A batch of a sharded step's tests, taken by one shard at a time (POST …/next-batch). */
export interface TestBatchesTable {
  id: string;
  execution_id: string;
  position: number;
  step_index: number;
  /** Queue order within the step: lower first. */
  seq: number;
  /** uniform: the shard it belongs to; duration: null (the shared queue). */
  shard: number | null;
  /** JSON text: [{classname, name}]. */
  tests: string;
  expected_ms: number;
  state: TestBatchState;
  device_run_id: string | null;
  lease_id: string | null;
}

/**
 * The event outbox (migration 2026-11-24-0020): what happened, appended in the transaction that made it
 * happen (features/events), for webhooks to deliver.
 */
export interface EventsTable {
  /** `evt_…`: sorts by creation time. */
  id: string;
  organization_id: string;
  /** `test.flaky_detected`, … (features/events/types.ts). */
  type: string;
  /** What the event is about: a test's ID for test.flaky_detected, an execution's for execution.*. */
  subject_id: string;
  /** JSON text: the event's `data` as webhooks send it. */
  payload: string;
  created_at: string;
  /** When webhooks' fan-out turned it into deliveries (features/webhooks); null until then. */
  dispatched_at: string | null;
}

/** An organization's webhook endpoint (API.md §9). */
export interface WebhooksTable {
  /** `wh_…` */
  id: string;
  organization_id: string;
  url: string;
  /** JSON array of event types. */
  events: string;
  format: "standard" | "slack";
  description: string | null;
  /** 0 or 1 */
  enabled: number;
  disabled_reason: string | null;
  /** The signing secret, sealed (features/webhooks/secret-box.ts); null for Slack endpoints. */
  secret: string | null;
  created_at: string;
  updated_at: string;
}

/** One message to one endpoint: `id` is its `webhook-id`, the same on every attempt. */
export interface WebhookDeliveriesTable {
  /** `msg_…` */
  id: string;
  webhook_id: string;
  organization_id: string;
  /** The outbox event it delivers; null for webhook.test. */
  event_id: string | null;
  type: string;
  /** JSON text: the Standard Webhooks body `{type, timestamp, data}`, sent as it is (Slack's is made from it). */
  payload: string;
  status: "pending" | "delivered" | "failed";
  attempts: number;
  next_attempt_at: string;
  lease_id: string | null;
  lease_expires_at: string | null;
  created_at: string;
  updated_at: string;
}

/** One try of a delivery: the delivery log. */
export interface WebhookAttemptsTable {
  id: string;
  delivery_id: string;
  at: string;
  status_code: number | null;
  duration_ms: number;
  error: string | null;
  /** The first KiB of the response body. */
  response_excerpt: string | null;
  /** Where the attempt went; null for attempts older than migration 0023 and for messages that could not be signed. */
  request_url: string | null;
  /** JSON object: every header Testbay set, lower-case names; null when request_url is. */
  request_headers: string | null;
  /** The body sent, when it is not the delivery's `payload` (Slack's message), at most 64 KiB; null: the payload. */
  request_body: string | null;
}

/** What a WebDriver session's new-session request waits for (API.md §12, migration 0026). */
export type WebdriverSessionState = "queued" | "ready" | "failed" | "ended";

/** A WebDriver session: one per execution of kind "session" (features/sessions/sessions.repo.ts writes it). */
export interface WebdriverSessionsTable {
  execution_id: string;
  organization_id: string;
  /** The client whose credentials created it; the session is bound to it. */
  client_id: string;
  state: WebdriverSessionState;
  /** JSON text: the capabilities Appium answered with, once ready. */
  capabilities: string | null;
  /** When it failed to start: the W3C error code and the agent's message. */
  error: string | null;
  message: string | null;
  /** Why it ended: deleted, idle_timeout, max_duration, cancelled, agent_lost, … */
  end_reason: string | null;
  idle_timeout_seconds: number;
  max_duration_seconds: number;
  /** What the client said of it (POST /v1/executions/{id}/result): passed or failed, and why. */
  result_status: string | null;
  result_reason: string | null;
  created_at: string;
  ready_at: string | null;
  ended_at: string | null;
}

/** A plan's scheduled runs (API.md §15, migration 0031), fired by features/schedules. */
export interface SchedulesTable {
  /** `sch_…` */
  id: string;
  organization_id: string;
  test_plan_id: string;
  /** As croner reads it: five fields, or six with seconds first. */
  cron: string;
  /** IANA name, as Intl resolves it (`UTC`, `Europe/Berlin`). */
  timezone: string;
  /** `latest`, `latest:branch=NAME` or a version. */
  version: string;
  /** 0 or 1 */
  enabled: number;
  /** The next time to fire; null while disabled. Claimed by `UPDATE … WHERE next_run_at = <due>`. */
  next_run_at: string | null;
  /** JSON text of the last time's outcome (features/schedules/schedules.repo.ts LastResult); null before the first. */
  last_result: string | null;
  /** The client's or person's ID (`usr_…`) that made it: what its runs record as who triggered them. */
  created_by: string;
  created_at: string;
  updated_at: string;
}
