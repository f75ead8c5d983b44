/**
 * Request and response models of the Testbay API v1 (API.md §1–6). The API's own types are aliases of the
 * types generated from the server's OpenAPI document (api.generated.ts, `npm run openapi`), so they cannot
 * drift from what the server sends; what is the client's own (pages, results with retry bookkeeping) is
 * written here.
 */
import type { components, operations } from "./api.generated.ts";
import type { FailedExecution } from "./errors.ts";

export type { FailedExecution };

/** A named schema of the API, as the OpenAPI document defines it. */
export type Schema<Name extends keyof components["schemas"]> = components["schemas"][Name];

/** The query parameters of an operation, by its operationId. */
type QueryOf<Id extends keyof operations> = NonNullable<operations[Id]["parameters"]["query"]>;

export type Platform = Schema<"Platform">;

/** `GET /me`: who a token belongs to. */
export type WhoAmI = Schema<"WhoAmI">;

/** One page of a list: newest first; pass `next_cursor` as `cursor` for the next page (null: no more). */
export interface Page<T> {
  items: T[];
  next_cursor: string | null;
}

/** `?limit=` (1–200, 50 by default) and `?cursor=` of every list. */
export type PageQuery = QueryOf<"listApps">;

export type App = Schema<"App">;
export type CreateApp = Schema<"CreateApp">;

/** What the server read from the binary itself. */
export type BinaryMetadata = Schema<"BinaryMetadata">;
export type AppVersion = Schema<"AppVersion">;

/** A version's test package (API.md §4b): the instrumentation APK built with it, as the server read it. */
export type TestPackage = operations["getTestPackage"]["responses"][200]["content"]["application/json"];

export type DeviceSpec = Schema<"DeviceSpec">;
export type InspectStep = Schema<"InspectStep">;
export type ShellStep = Schema<"ShellStep">;
export type InstrumentationStep = Schema<"InstrumentationStep">;
export type XcuitestStep = Schema<"XcuitestStep">;
export type MaestroStep = Schema<"MaestroStep">;
export type Step = Schema<"Step">;

export type TestPlanState = Schema<"TestPlanState">;
export type TestPlan = Schema<"TestPlan">;
export type CreateTestPlan = Schema<"CreateTestPlan">;
export type PatchTestPlan = Schema<"PatchTestPlan">;
export type TestPlanQuery = QueryOf<"listTestPlans">;

export type ExecutionStatus = Schema<"ExecutionStatus">;

/** Statuses an execution does not leave. */
export const finalStatuses: ReadonlySet<ExecutionStatus> = new Set([
  "passed",
  "failed",
  "errored",
  "cancelled",
]);

export function isFinal(status: ExecutionStatus): boolean {
  return finalStatuses.has(status);
}

export type Summary = Schema<"Summary">;
export type DeviceRun = Schema<"DeviceRun">;
export type Execution = Schema<"Execution">;
export type ExecutionQuery = QueryOf<"listExecutions">;
export type Artifact = Schema<"Artifact">;

/** `PUT /tests/{test_id}/quarantine`: who quarantined a test, since when and why. */
export type Quarantine = operations["quarantineTest"]["responses"][200]["content"]["application/json"];

/** A webhook endpoint (API.md §9), as every read shows it: never its secret. */
export type Webhook = operations["getWebhook"]["responses"][200]["content"]["application/json"];
/** `POST /webhooks`: the webhook with its signing secret (`whsec_…`), shown this once; none for slack. */
export type CreatedWebhook = operations["createWebhook"]["responses"][201]["content"]["application/json"];
export type CreateWebhook = NonNullable<
  operations["createWebhook"]["requestBody"]
>["content"]["application/json"];
export type UpdateWebhook = NonNullable<
  operations["updateWebhook"]["requestBody"]
>["content"]["application/json"];
/** `POST /webhooks/{id}/rotate-secret`: the webhook with its new secret, shown this once. */
export type RotatedWebhookSecret =
  operations["rotateWebhookSecret"]["responses"][200]["content"]["application/json"];
export type WebhookFormat = Webhook["format"];
/** One message of a webhook's delivery log, with its attempts oldest first. */
export type WebhookDelivery =
  operations["listWebhookDeliveries"]["responses"][200]["content"]["application/json"]["items"][number];
export type WebhookAttempt = WebhookDelivery["attempts"][number];
/**
 * What an attempt sent: its URL (an endpoint's may change between attempts) and every header Testbay set,
 * lower-case names. Null for attempts from before the server kept requests. The body is the delivery's
 * `request_body`, the same on every attempt.
 */
export type WebhookAttemptRequest = NonNullable<WebhookAttempt["request"]>;
/** `POST /webhooks/{id}/test` and `…/redeliver`: 202 with the message id (its webhook-id header). */
export type WebhookDeliveryAccepted =
  operations["sendWebhookTest"]["responses"][202]["content"]["application/json"];

/** Which of an organization's queued runs a device takes first (API.md §15); normal when not given. */
export type ExecutionPriority = "high" | "normal" | "low";
export type TriggerRequest = Omit<Schema<"TriggerRequest">, "priority"> & { priority?: ExecutionPriority };
export type BatchTriggerRequest = Omit<Schema<"BatchTriggerRequest">, "priority"> & {
  priority?: ExecutionPriority;
};

/**
 * A batch trigger's answer: 200 (every plan started) or 207 (some did). Read `failed_executions` every time
 * (rule 6): a 2xx is not full success by itself. When no plan starts the SDK throws a TestbayApiError whose
 * `failedExecutions` says why for each.
 */
export type BatchTriggerResult = Schema<"BatchTriggerResponse"> & {
  status: 200 | 207;
  /** The Idempotency-Key the trigger was sent (and retried) with. */
  idempotency_key: string;
  /** True when the server replayed an earlier answer for this key instead of triggering anew. */
  replayed: boolean;
};

export type TriggerResult = Schema<"TriggerResponse"> & {
  idempotency_key: string;
  replayed: boolean;
};

/** A test case of an execution (`GET /executions/{id}/tests`). */
export type TestCase =
  operations["listExecutionTests"]["responses"][200]["content"]["application/json"]["items"][number];
export type TestCaseQuery = QueryOf<"listExecutionTests">;

/** A connected (or recently seen) agent and its devices (`GET /agents`). */
export type Agent =
  operations["listAgents"]["responses"][200]["content"]["application/json"]["items"][number];

/** What a trigger says about the CI run it comes from (API.md §6). */
export type CiMetadata = NonNullable<BatchTriggerRequest["ci"]>;
