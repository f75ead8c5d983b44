import type { RequestHeader } from "./openapi-request-headers.ts";

/**
 * What the OpenAPI document says about each operation beyond its route schema: a stable operationId, and
 * the parts a JSON route schema cannot express (raw uploads, downloads, text responses, form bodies).
 * Keyed by `method path` as the document writes it. Every documented operation must have an entry here
 * (openapi.test.ts checks it): operationIds are what generated clients name their calls after.
 */
export interface OperationDoc {
  operationId: string;
  /** The request body is raw bytes (an upload), in these media types. */
  rawBody?: { mediaTypes: string[]; description: string };
  /** The JSON body may also be sent as `application/x-www-form-urlencoded`. */
  formBody?: true;
  /** The success body is a stored file: 200 whole or 206 one range, with ETag and Range support. */
  download?: { mediaTypes: string[]; description: string };
  /** The 200 body is text in this media type instead of JSON. */
  text?: { mediaType: string; description: string };
  /** The response with this status carries a Location header (the created resource). */
  location?: string;
  /** Request headers the operation reads, by name in openapi-document.ts's `requestHeaders`. */
  headers?: RequestHeader[];
  /** Overrides the route's security requirements. */
  security?: Array<Record<string, string[]>>;
}

export const operationDocs: Record<string, OperationDoc> = {
  "get /healthz": { operationId: "getLiveness" },
  "get /readyz": { operationId: "getReadiness" },
  "get /downloads/testbay.mjs": {
    operationId: "downloadCliBundle",
    download: { mediaTypes: ["text/javascript"], description: "The CLI as one ES module file." },
  },
  "get /downloads/testbay-cli.tgz": {
    operationId: "downloadCliPackage",
    download: { mediaTypes: ["application/gzip"], description: "The @testbay/client package tarball." },
  },
  "get /downloads/testbay-agent.tgz": {
    operationId: "downloadAgentPackage",
    download: { mediaTypes: ["application/gzip"], description: "The @testbay/agent package tarball." },
  },
  "get /downloads/testbay.schema.json": {
    operationId: "downloadPlansFileSchema",
    download: {
      mediaTypes: ["application/schema+json"],
      description: "The JSON Schema (draft-07) of testbay.yaml, the test plans kept as code.",
    },
  },
  "get /problems/{code}": { operationId: "getProblemType" },
  "get /docs": { operationId: "getApiReference" },
  "get /.well-known/oauth-authorization-server": { operationId: "getAuthorizationServerMetadata" },
  "get /v1/openapi.json": { operationId: "getOpenApiDocument" },
  "get /v1": { operationId: "getApiIndex" },
  "post /auth/login": { operationId: "signIn" },
  "post /auth/logout": { operationId: "signOut" },
  "get /auth/session": { operationId: "getSession" },
  "get /auth/oidc/start": { operationId: "startSingleSignOn" },
  "get /auth/oidc/callback": { operationId: "finishSingleSignOn" },
  "get /v1/audit": { operationId: "listAuditEvents" },
  "post /auth/password": { operationId: "changePassword" },
  "post /v1/oauth/token": {
    operationId: "createToken",
    formBody: true,
    // No token yet: the client authenticates by HTTP Basic, or by client_id and client_secret in the body.
    security: [{}, { clientSecretBasic: [] }],
  },
  "get /v1/me": { operationId: "getMe" },
  "get /v1/clients": { operationId: "listClients" },
  "get /v1/clients/{client_id}": { operationId: "getClient" },
  "post /v1/clients": { operationId: "createClient", location: "201" },
  "post /v1/clients/{client_id}/disable": { operationId: "disableClient" },
  "post /v1/clients/{client_id}/enable": { operationId: "enableClient" },
  "post /v1/clients/{client_id}/rotate": { operationId: "rotateClientSecret" },
  "get /v1/users": { operationId: "listUsers" },
  "post /v1/users": { operationId: "createUser" },
  "patch /v1/users/{email}": { operationId: "updateUser" },
  "post /v1/apps": { operationId: "createApp" },
  "get /v1/apps": { operationId: "listApps" },
  "get /v1/apps/{package_name}": { operationId: "getApp" },
  "put /v1/apps/{package_name}/versions/{version}": {
    operationId: "uploadAppVersion",
    rawBody: {
      mediaTypes: ["application/octet-stream"],
      description: "The binary itself (APK, AAB, IPA or zipped .app), streamed; Content-Length or chunked.",
    },
    location: "201",
    headers: ["ContentDigest"],
  },
  "get /v1/apps/{package_name}/versions/{version}": { operationId: "getAppVersion" },
  "head /v1/apps/{package_name}/versions/{version}": { operationId: "checkAppVersion" },
  "delete /v1/apps/{package_name}/versions/{version}": { operationId: "deleteAppVersion" },
  "get /v1/apps/{package_name}/versions": { operationId: "listAppVersions" },
  "get /v1/apps/{package_name}/versions/{version}/binary": {
    operationId: "downloadAppVersionBinary",
    download: { mediaTypes: ["application/octet-stream"], description: "The binary as it was uploaded." },
  },
  "put /v1/apps/{package_name}/versions/{version}/test-package": {
    operationId: "uploadTestPackage",
    rawBody: {
      mediaTypes: ["application/octet-stream"],
      description:
        "The Android instrumentation APK (app-debug-androidTest.apk), or for iOS a zip of what xcodebuild build-for-testing writes (one .xctestrun, the -Runner.app and the test bundles), streamed; Content-Length or chunked.",
    },
    location: "201",
    headers: ["ContentDigest"],
  },
  "get /v1/apps/{package_name}/versions/{version}/test-package": { operationId: "getTestPackage" },
  "head /v1/apps/{package_name}/versions/{version}/test-package": { operationId: "checkTestPackage" },
  "get /v1/apps/{package_name}/versions/{version}/test-package/binary": {
    operationId: "downloadTestPackageBinary",
    download: {
      mediaTypes: ["application/octet-stream"],
      description: "The test package as it was uploaded.",
    },
  },
  "put /v1/apps/{package_name}/versions/{version}/files/{name}": {
    operationId: "uploadVersionFile",
    rawBody: {
      mediaTypes: ["application/octet-stream"],
      description:
        "The file a version's tests need on the device (an APK for additional_apks, a fixture for push), streamed; Content-Length or chunked; at most 100 MiB.",
    },
    location: "201",
    headers: ["ContentDigest"],
  },
  "get /v1/apps/{package_name}/versions/{version}/files": { operationId: "listVersionFiles" },
  "get /v1/apps/{package_name}/versions/{version}/files/{name}": {
    operationId: "downloadVersionFile",
    download: { mediaTypes: ["application/octet-stream"], description: "The file as it was uploaded." },
  },
  "head /v1/apps/{package_name}/versions/{version}/files/{name}": { operationId: "checkVersionFile" },
  "post /v1/testplans": { operationId: "createTestPlan" },
  "get /v1/testplans": { operationId: "listTestPlans" },
  "get /v1/testplans/{id}": { operationId: "getTestPlan" },
  "patch /v1/testplans/{id}": { operationId: "updateTestPlan" },
  "delete /v1/testplans/{id}": { operationId: "deleteTestPlan" },
  "post /v1/testplans/{id}/archive": { operationId: "archiveTestPlan" },
  "post /v1/testplans/{id}/restore": { operationId: "restoreTestPlan" },
  "post /v1/testplans/{id}/schedules": { operationId: "createSchedule" },
  "get /v1/testplans/{id}/schedules": { operationId: "listSchedules" },
  "patch /v1/schedules/{id}": { operationId: "updateSchedule" },
  "delete /v1/schedules/{id}": { operationId: "deleteSchedule" },
  "post /v1/testplan/run": { operationId: "triggerTestPlan" },
  "post /v1/testplan/run/batch": { operationId: "triggerTestPlans" },
  "get /v1/executions": { operationId: "listExecutions" },
  "get /v1/executions/{id}": { operationId: "getExecution" },
  "post /v1/executions/{id}/cancel": { operationId: "cancelExecution" },
  "post /v1/executions/{id}/result": { operationId: "setSessionResult" },
  "get /v1/executions/{id}/junit": {
    operationId: "getExecutionJunit",
    text: { mediaType: "application/xml", description: "A JUnit XML report: one testsuite per device run." },
  },
  "get /v1/executions/{id}/tests": { operationId: "listExecutionTests" },
  "get /v1/executions/{id}/report.html": {
    operationId: "getExecutionReport",
    text: { mediaType: "text/html", description: "One self-contained HTML file: the report to share." },
  },
  "get /v1/executions/{id}/ctrf": { operationId: "getExecutionCtrf" },
  "get /v1/failures": { operationId: "listFailureGroups" },
  "get /v1/failures/{signature}/occurrences": { operationId: "listFailureOccurrences" },
  "get /v1/testplans/{id}/trends": { operationId: "getTestPlanTrends" },
  "get /v1/tests": { operationId: "listTestHistory" },
  "put /v1/tests/{test_id}/quarantine": { operationId: "quarantineTest" },
  "delete /v1/tests/{test_id}/quarantine": { operationId: "releaseTest" },
  "post /v1/webhooks": { operationId: "createWebhook" },
  "get /v1/webhooks": { operationId: "listWebhooks" },
  "get /v1/webhooks/{id}": { operationId: "getWebhook" },
  "patch /v1/webhooks/{id}": { operationId: "updateWebhook" },
  "delete /v1/webhooks/{id}": { operationId: "deleteWebhook" },
  "post /v1/webhooks/{id}/rotate-secret": { operationId: "rotateWebhookSecret" },
  "post /v1/webhooks/{id}/test": { operationId: "sendWebhookTest" },
  "get /v1/webhooks/{id}/deliveries": { operationId: "listWebhookDeliveries" },
  "post /v1/webhooks/{id}/deliveries/{delivery_id}/redeliver": { operationId: "redeliverWebhookMessage" },
  "get /v1/executions/{id}/log": {
    operationId: "getExecutionLog",
    text: { mediaType: "text/plain", description: "The log, streamed as UTF-8 text." },
  },
  "get /v1/executions/{id}/artifacts": { operationId: "listExecutionArtifacts" },
  "get /v1/executions/{id}/artifacts/{name}": {
    operationId: "downloadExecutionArtifact",
    download: {
      // The agent's Content-Type is kept; without one the artifact is application/octet-stream.
      mediaTypes: ["application/octet-stream", "*/*"],
      description: "The artifact, in the content type the agent uploaded it with; always an attachment.",
    },
  },
  "get /v1/agents": { operationId: "listAgents" },
  "get /v1/events": { operationId: "streamEvents" },
  "post /v1/agent/claim": { operationId: "claimJob" },
  "post /v1/agent/jobs/{lease_id}/heartbeat": { operationId: "renewLease" },
  "get /v1/agent/jobs/{lease_id}/files/{name}": {
    operationId: "downloadJobVersionFile",
    download: {
      mediaTypes: ["application/octet-stream"],
      description: "A file of the job's version, as it was uploaded.",
    },
  },
  "get /v1/agent/jobs/{lease_id}/binary": {
    operationId: "downloadJobBinary",
    download: {
      mediaTypes: ["application/octet-stream"],
      description: "The binary of the job's version (an --all-orgs agent's binary_url), as it was uploaded.",
    },
  },
  "get /v1/agent/jobs/{lease_id}/test-package": {
    operationId: "downloadJobTestPackage",
    download: {
      mediaTypes: ["application/octet-stream"],
      description: "The test package of the job's version (an --all-orgs agent's test_package.url).",
    },
  },
  "post /v1/agent/jobs/{lease_id}/events": { operationId: "reportJobEvents" },
  "post /v1/agent/jobs/{lease_id}/steps/{step_index}/tests": { operationId: "listStepTests" },
  "post /v1/agent/jobs/{lease_id}/steps/{step_index}/next-batch": { operationId: "takeNextBatch" },
  "post /v1/agent/jobs/{lease_id}/complete": { operationId: "completeJob" },
  "post /v1/agent/jobs/{lease_id}/session": { operationId: "reportAgentSession" },
  "put /v1/agent/jobs/{lease_id}/artifacts/{name}": {
    operationId: "uploadJobArtifact",
    rawBody: {
      mediaTypes: ["application/octet-stream", "*/*"],
      description: "The file itself, streamed; its Content-Type is kept and served back on download.",
    },
  },
};

/** A stand-in for an operation missing above, so the document stays valid; the unit test catches it. */
export function fallbackOperationId(method: string, path: string): string {
  const words = `${method} ${path}`
    .replace(/[{}]/g, "")
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean);
  return words.map((w, i) => (i === 0 ? w.toLowerCase() : w[0]?.toUpperCase() + w.slice(1))).join("");
}
