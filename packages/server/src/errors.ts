/**
 * The one catalog of errors a caller can meet. Every error response is built from an entry here, so a code
 * always has the same status, title and retry advice, and always says what to do about it (`fix`).
 */

interface CatalogEntry {
  status: number;
  title: string;
  /** The default remedy; a thrower may pass a more specific one. */
  fix: string;
  retryable: boolean;
}

export const errorCatalog = {
  invalid_request: {
    status: 400,
    title: "Invalid request",
    fix: "Correct the fields listed in `errors` and send the request again; it fails the same way until then.",
    retryable: false,
  },
  binary_package_mismatch: {
    status: 400,
    title: "Binary declares another package",
    fix: "Upload the binary built for this app, or register the package name the binary declares.",
    retryable: false,
  },
  test_package_mismatch: {
    status: 400,
    title: "Test package instruments another app",
    fix: "Upload the test APK built with this app (its <instrumentation android:targetPackage> must be the app's package name), or upload it to the app it targets.",
    retryable: false,
  },
  unsupported_binary: {
    status: 400,
    title: "Unsupported binary",
    fix: "Upload an APK, AAB, IPA or a zipped .app bundle.",
    retryable: false,
  },
  checksum_mismatch: {
    status: 400,
    title: "Checksum mismatch",
    fix: "The body was changed in transit or the Content-Digest was computed over another file; upload again.",
    retryable: false,
  },
  invalid_access_token: {
    status: 401,
    title: "Invalid access token",
    fix: "Request a token with POST /v1/oauth/token (or testbay token) and send it as the x-api-key header.",
    retryable: false,
  },
  invalid_credentials: {
    status: 401,
    title: "Wrong email or password",
    fix: "Check the email address and the password (passwords are case-sensitive). An administrator can create an account with testbay-server user create --email E --role viewer|member|admin.",
    retryable: false,
  },
  forbidden: {
    status: 403,
    title: "Forbidden",
    fix: "Use credentials of a client whose role may make this call.",
    retryable: false,
  },
  app_not_found: {
    status: 404,
    title: "App not found",
    fix: "Register the app with POST /v1/apps (or testbay apps create --app PKG --platform android|ios), or use the exact package name (package names are case-sensitive).",
    retryable: false,
  },
  app_version_not_found: {
    status: 404,
    title: "App version not found",
    fix: "Register the version first by uploading its binary: PUT /v1/apps/PKG/versions/V, or testbay upload --app PKG --version V --file PATH.",
    retryable: false,
  },
  version_file_not_found: {
    status: 404,
    title: "Version file not found",
    fix: "Upload the file with the version: testbay upload --app PKG --version V --file BUILD --extra-file NAME=PATH (PUT /v1/apps/PKG/versions/V/files/NAME); GET /v1/apps/PKG/versions/V/files lists what the version has.",
    retryable: false,
  },
  test_package_not_found: {
    status: 404,
    title: "Test package not found",
    fix: "Upload the version's test APK: PUT /v1/apps/PKG/versions/V/test-package, or testbay upload --app PKG --version V --file BUILD --test-file PATH (the build is skipped when it is registered already).",
    retryable: false,
  },
  test_plan_not_found: {
    status: 404,
    title: "Test plan not found",
    fix: "Confirm the test plan ID (GET /v1/testplans, or testbay plans list); plan IDs do not work across organizations.",
    retryable: false,
  },
  execution_not_found: {
    status: 404,
    title: "Execution not found",
    fix: "Confirm the execution ID (GET /v1/executions lists the newest); execution IDs do not work across organizations.",
    retryable: false,
  },
  test_not_found: {
    status: 404,
    title: "Test not found",
    fix: "Use a test id from GET /v1/tests?test_plan_id=… or GET /v1/executions/{id}/tests: a test gets its id when an agent first reports it, and test ids do not work across organizations.",
    retryable: false,
  },
  webhook_not_found: {
    status: 404,
    title: "Webhook not found",
    fix: "Confirm the webhook ID (GET /v1/webhooks lists the organization's webhooks); webhook IDs do not work across organizations.",
    retryable: false,
  },
  webhook_delivery_not_found: {
    status: 404,
    title: "Webhook delivery not found",
    fix: "Use a delivery ID from GET /v1/webhooks/{id}/deliveries of the same webhook.",
    retryable: false,
  },
  schedule_not_found: {
    status: 404,
    title: "Schedule not found",
    fix: "Confirm the schedule ID (GET /v1/testplans/{id}/schedules or testbay schedules list --plan ID lists a plan's schedules); schedule IDs do not work across organizations.",
    retryable: false,
  },
  failure_group_not_found: {
    status: 404,
    title: "Failure group not found",
    fix: "Use a signature from GET /v1/failures: a group exists once a failed test with that signature was recorded in your organization, and signatures do not show other organizations' failures.",
    retryable: false,
  },
  client_not_found: {
    status: 404,
    title: "Client not found",
    fix: "Confirm the client ID; clients of another organization are not visible.",
    retryable: false,
  },
  user_not_found: {
    status: 404,
    title: "Person not found",
    fix: "Confirm the email address (GET /v1/users lists the organization's people); people of another organization are not visible.",
    retryable: false,
  },
  route_not_found: {
    status: 404,
    title: "No such endpoint",
    fix: "Check the method and path against the API reference at GET /v1/openapi.json.",
    retryable: false,
  },
  oidc_not_configured: {
    status: 404,
    title: "Single sign-on is not configured",
    fix: "Set TESTBAY_OIDC_ISSUER, TESTBAY_OIDC_CLIENT_ID and TESTBAY_OIDC_CLIENT_SECRET (register the callback <server origin>/auth/oidc/callback with the provider) and restart the server, or sign in with email and password (POST /auth/login).",
    retryable: false,
  },
  app_exists: {
    status: 409,
    title: "App already registered",
    fix: "The app is registered already: use it as it is.",
    retryable: false,
  },
  version_file_exists: {
    status: 409,
    title: "Version file already uploaded",
    fix: "A version's files do not change: upload changed files with a new version of the build (testbay upload --extra-file NAME=PATH HEADs each file first and skips those already there).",
    retryable: false,
  },
  version_files_limit: {
    status: 409,
    title: "Too many version files",
    fix: "A version holds at most 20 files: bundle small fixtures into one archive and unpack it in the test, or drop files the plan does not name.",
    retryable: false,
  },
  test_package_exists: {
    status: 409,
    title: "Test package already uploaded",
    fix: "A version has one test package: upload the changed tests with a new version (HEAD the test package first to skip the upload).",
    retryable: false,
  },
  app_version_exists: {
    status: 409,
    title: "App version already registered",
    fix: "Upload only when the build changes, and then under a new version: bump the version. testbay upload skips a version that is registered with the same build.",
    retryable: false,
  },
  file_size_exceeded: {
    status: 413,
    title: "File size exceeded",
    fix: "Make the binary smaller: strip debug symbols, drop unused resources, or split it by ABI.",
    retryable: false,
  },
  request_too_large: {
    status: 413,
    title: "Request body too large",
    fix: "Send a smaller JSON body; binaries go to the upload endpoint instead.",
    retryable: false,
  },
  request_timeout: {
    status: 408,
    title: "Request body stalled",
    fix: "Send the body without long pauses (check the network and any proxy between); then send the request again.",
    retryable: true,
  },
  organization_required: {
    status: 409,
    title: "Organization required",
    fix: "Send the request again with org set to the name of the organization to sign in to (one of those in `organizations`).",
    retryable: false,
  },
  user_exists: {
    status: 409,
    title: "Person already exists",
    fix: "Someone in this organization signs in with this email already (emails are case-insensitive): change their role with PATCH /v1/users/{email} instead, or use another address.",
    retryable: false,
  },
  self_lockout: {
    status: 409,
    title: "Would lock yourself out",
    fix: "Ask another administrator of your organization to make this change (Settings in the dashboard), or run the admin CLI on the server: testbay-server user disable EMAIL, testbay-server client disable CLIENT_ID.",
    retryable: false,
  },
  app_version_in_use: {
    status: 409,
    title: "App version in use",
    fix: "Wait until the version's queued and running executions end, or cancel them (POST /v1/executions/{id}/cancel, or testbay cancel ID), then delete it again.",
    retryable: false,
  },
  not_a_session: {
    status: 409,
    title: "Not a session",
    fix: "Only a WebDriver session (an execution of kind session, API.md §12) takes a result from its client: a test plan's run gets its status from its tests.",
    retryable: false,
  },
  lease_lost: {
    status: 409,
    title: "Lease lost",
    fix: "Stop working on this job: its lease expired or ended, and the run was re-queued or finished. Claim a new job with POST /v1/agent/claim, and heartbeat more often than TESTBAY_LEASE_TTL_SECONDS.",
    retryable: false,
  },
  shard_plan_missing: {
    status: 409,
    title: "Shard plan missing",
    fix: "List the step's tests first: POST /v1/agent/jobs/{lease_id}/steps/{step_index}/tests with every test the step would run, then ask for batches with POST …/next-batch. An agent that sees this is older than the server's sharding: update it.",
    retryable: false,
  },
  artifact_not_found: {
    status: 404,
    title: "Artifact not found",
    fix: "List the execution's artifacts (GET /v1/executions/ID/artifacts, or testbay artifacts ID) and use a name from there.",
    retryable: false,
  },
  range_not_satisfiable: {
    status: 416,
    title: "Range not satisfiable",
    fix: "Ask for a range within the binary's size (see Content-Range: bytes */SIZE), or leave Range out for all of it.",
    retryable: false,
  },
  headers_too_large: {
    status: 431,
    title: "Request headers too large",
    fix: "Send smaller headers (16 KiB in all at most): the token in x-api-key and little else.",
    retryable: false,
  },
  unsupported_media_type: {
    status: 415,
    title: "Unsupported media type",
    fix: "Send the body as application/json (the token endpoint also takes application/x-www-form-urlencoded).",
    retryable: false,
  },
  idempotency_key_reused: {
    status: 422,
    title: "Idempotency key reused",
    fix: "Use a new Idempotency-Key for a different request; repeat a key only to retry the very same request.",
    retryable: false,
  },
  rate_limited: {
    status: 429,
    title: "Too many requests",
    fix: "Wait for the Retry-After seconds, then retry with exponential backoff and jitter; request one token per pipeline run, not per call.",
    retryable: true,
  },
  internal_error: {
    status: 500,
    title: "Internal server error",
    fix: "Contact support with the request_id.",
    retryable: false,
  },
  service_unavailable: {
    status: 503,
    title: "Service unavailable",
    fix: "The server is not ready (database or storage unreachable); retry with backoff.",
    retryable: true,
  },
} as const satisfies Record<string, CatalogEntry>;

export type ErrorCode = keyof typeof errorCatalog;

/**
 * Remedies that tell a person what to type, both as the HTTP call and as the `testbay` CLI command
 * (CLIENT.md rule 12), with the request's own names filled in: a CI log shows the command to copy, and an
 * SDK or curl user sees the call. The catalog's defaults above stay generic (PKG, V) for the cases where a
 * request does not carry the names.
 */
export const remedy = {
  registerApp: (packageName: string) =>
    `Register the app: POST /v1/apps {"package_name":"${packageName}","platform":"android"} (or "ios"), or testbay apps create --app ${packageName} --platform android|ios. Package names are case-sensitive.`,
  uploadVersion: (packageName: string, version: string) =>
    `Upload the build first: PUT /v1/apps/${packageName}/versions/${version} with the binary as the body, or testbay upload --app ${packageName} --version ${version} --file PATH.`,
  uploadTestPackage: (packageName: string, version: string) =>
    `Upload the version's test APK (app-debug-androidTest.apk): PUT /v1/apps/${packageName}/versions/${version}/test-package, or testbay upload --app ${packageName} --version ${version} --file BUILD --test-file PATH (the build is skipped when it is registered already).`,
  bumpVersion: (packageName: string, version: string) =>
    `Bump the version for a changed build: PUT /v1/apps/${packageName}/versions/NEW_VERSION, or testbay upload --app ${packageName} --version NEW_VERSION --file PATH. For the same build, skip the upload (HEAD /v1/apps/${packageName}/versions/${version} answers 200).`,
  listPlans: (packageName: string) =>
    `GET /v1/testplans?package_name=${packageName} or testbay plans list --app ${packageName} lists its plans`,
} as const;

/** A configured size as people read it: "524288000 bytes (500 MiB)", from the value, never a fixed text. */
export function sizeText(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  if (mib >= 1) return `${bytes} bytes (${Number.isInteger(mib) ? mib : mib.toFixed(1)} MiB)`;
  return `${bytes} bytes`;
}

export interface ApiErrorOptions {
  reason?: string;
  detail?: string;
  fix?: string;
  /** Extra problem members (`errors`, `limit_bytes`, `did_you_mean`, …). */
  extra?: Record<string, unknown>;
  headers?: Record<string, string>;
}

/** An error meant for the caller. Anything else that is thrown becomes a 500 that reveals nothing. */
export class ApiError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly reason: string | undefined;
  readonly detail: string;
  readonly fix: string;
  readonly retryable: boolean;
  readonly extra: Record<string, unknown>;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, options: ApiErrorOptions = {}) {
    const entry: CatalogEntry = errorCatalog[code];
    super(options.detail ?? entry.title);
    this.name = "ApiError";
    this.code = code;
    this.status = entry.status;
    this.reason = options.reason;
    this.detail = options.detail ?? `${entry.title}.`;
    this.fix = options.fix ?? entry.fix;
    this.retryable = entry.retryable;
    this.extra = options.extra ?? {};
    this.headers = options.headers ?? {};
  }
}

/** RFC 9457 problem document, plus Testbay's members. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ErrorCode;
  reason?: string;
  detail: string;
  fix: string;
  retryable: boolean;
  request_id: string;
  [extra: string]: unknown;
}

/**
 * A path-absolute URI reference: it resolves against the server that answered (RFC 9457 §3.1.1), which
 * serves a description of every problem type at GET /problems/{code}.
 */
export function problemType(code: ErrorCode): string {
  return `/problems/${code}`;
}

export function toProblem(error: ApiError, requestId: string): Problem {
  return {
    ...error.extra,
    type: problemType(error.code),
    title: errorCatalog[error.code].title,
    status: error.status,
    code: error.code,
    ...(error.reason === undefined ? {} : { reason: error.reason }),
    detail: error.detail,
    fix: error.fix,
    retryable: error.retryable,
    request_id: requestId,
  };
}
