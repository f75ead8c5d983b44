import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { ExecutionPriority } from "../../db/schema.ts";
import { ApiError, toProblem } from "../../errors.ts";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { actorOf } from "../audit/index.ts";
import type { CiMetadata, ExecutionsService } from "../executions/index.ts";
import { fingerprint, type IdempotencyStore, type StoredResponse } from "./idempotency.ts";
import { BatchTriggerBody, BatchTriggerResponse, TriggerBody, TriggerResponse } from "./triggers.schemas.ts";
import { batchResponse, type TriggersService } from "./triggers.service.ts";

const keyPattern = /^[\x21-\x7e]{1,255}$/;

const idempotencyHeader = {
  type: "object",
  properties: {
    "idempotency-key": {
      type: "string",
      description:
        "Makes retries safe: a repeat with the same key and body (within 24 h, per client) replays the first response and triggers nothing; the same key with another body is 422 idempotency_key_reused.",
    },
  },
} as const;

/** A response as bytes: what is sent the first time is exactly what a replay sends. */
function asStored(
  status: number,
  body: unknown,
  contentType = "application/json; charset=utf-8",
): StoredResponse {
  return { status, contentType, body: JSON.stringify(body) };
}

/**
 * Runs `work` once per Idempotency-Key: the first request runs it and records its response; a repeat
 * replays that response byte for byte. Client errors are recorded too (the same request fails the same
 * way); server errors are not, so a retry after one runs afresh.
 */
async function once(
  store: IdempotencyStore,
  request: FastifyRequest,
  reply: FastifyReply,
  work: () => Promise<StoredResponse>,
): Promise<FastifyReply> {
  const header = request.headers["idempotency-key"];
  if (header === undefined) return send(reply, await work());
  if (typeof header !== "string" || !keyPattern.test(header)) {
    throw new ApiError("invalid_request", {
      detail: "The Idempotency-Key header must be 1–255 visible ASCII characters.",
      fix: "Send a unique key per logical request, such as a UUID, and reuse it only to retry that request.",
      extra: { errors: [{ path: "/idempotency-key", in: "headers", message: "is malformed" }] },
    });
  }
  const clientId = principalOf(request).clientId;
  const claim = await store.claim(
    clientId,
    header,
    fingerprint(request.routeOptions.url ?? "", request.body),
  );
  if (claim.kind === "replay") return send(reply.header("idempotent-replayed", "true"), claim.response);

  let response: StoredResponse;
  try {
    response = await work();
  } catch (error) {
    if (!(error instanceof ApiError) || error.status >= 500) {
      await store.release(clientId, header);
      throw error;
    }
    response = asStored(
      error.status,
      toProblem(error, request.id),
      "application/problem+json; charset=utf-8",
    );
  }
  await store.complete(clientId, header, response);
  return send(reply, response);
}

const priorities: readonly ExecutionPriority[] = ["high", "normal", "low"];

/** The trigger's priority (API.md §15): normal when absent; another value is refused, saying which are allowed. */
function priorityOf(priority: string | undefined): ExecutionPriority {
  if (priority === undefined) return "normal";
  if ((priorities as readonly string[]).includes(priority)) return priority as ExecutionPriority;
  throw new ApiError("invalid_request", {
    detail: `priority ${JSON.stringify(priority)} is not one of high, normal, low.`,
    fix: 'Send "priority": "high", "normal" or "low", or leave it out for normal.',
    extra: { errors: [{ path: "/priority", in: "body", message: "is not one of high, normal, low" }] },
  });
}

function send(reply: FastifyReply, response: StoredResponse): FastifyReply {
  return reply.code(response.status).type(response.contentType).send(response.body);
}

export const triggersRoutes: FastifyPluginAsyncTypebox<{
  triggers: TriggersService;
  idempotency: IdempotencyStore;
  /** Views with waiting_reason, as GET /executions/{id} shows them. */
  executions: ExecutionsService;
}> = async (app, { triggers, idempotency, executions }) => {
  const triggerPlans = (
    request: FastifyRequest,
    body: {
      package_name: string;
      version: string;
      env?: Record<string, string>;
      ci?: CiMetadata;
      priority?: string;
    },
    testPlanIds: string[],
  ) => {
    const principal = principalOf(request);
    const priority = priorityOf(body.priority);
    return triggers.trigger({
      organizationId: principal.organizationId,
      clientId: principal.clientId,
      actor: actorOf(principal),
      packageName: body.package_name,
      version: body.version,
      testPlanIds,
      env: body.env ?? {},
      ci: body.ci,
      priority,
    });
  };

  app.post(
    "/v1/testplan/run",
    {
      config: { auth: ["ci", "admin"] },
      schema: {
        summary: "Trigger one test plan",
        description:
          "200 {execution}. 404 app_not_found / app_version_not_found (register the version first) / test_plan_not_found (reason unknown, archived or deleted) / test_package_not_found / version_file_not_found (a step's additional_apks or push[].file names a file the version was not uploaded with); 400 when the plan tests another app.",
        tags: ["triggers"],
        headers: idempotencyHeader,
        body: TriggerBody,
        response: { 200: TriggerResponse, ...ProblemResponses },
      },
    },
    async (request, reply) =>
      once(idempotency, request, reply, async () => {
        const outcome = await triggerPlans(request, request.body, [request.body.test_plan_id]);
        const [failed] = outcome.failed;
        const [execution] = outcome.executions;
        if (failed || !execution) {
          throw new ApiError(failed?.code as ApiError["code"], {
            ...(failed?.reason ? { reason: failed.reason } : {}),
            detail: failed?.detail,
            fix: failed?.fix,
          });
        }
        return asStored(200, {
          execution: await executions.view(principalOf(request).organizationId, execution),
        });
      }),
  );

  app.post(
    "/v1/testplan/run/batch",
    {
      config: { auth: ["ci", "admin"] },
      schema: {
        summary: "Trigger several test plans in one call",
        description:
          "200 when every plan was triggered; 207 when only some were; when none was, the failures' common status (else 400) with a problem body. failed_executions is on every response: always read it. Whole-request failures: 400, 404 app_not_found / app_version_not_found, 401, 429.",
        tags: ["triggers"],
        headers: idempotencyHeader,
        body: BatchTriggerBody,
        response: { 200: BatchTriggerResponse, 207: BatchTriggerResponse, ...ProblemResponses },
      },
    },
    async (request, reply) =>
      once(idempotency, request, reply, async () => {
        const outcome = await triggerPlans(request, request.body, request.body.test_plan_ids);
        const views = await executions.views(principalOf(request).organizationId, outcome.executions);
        const response = batchResponse(outcome, views);
        if (response instanceof ApiError) throw response;
        return asStored(response.status, response.body);
      }),
  );
};
