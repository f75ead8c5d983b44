import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError, type ErrorCode, errorCatalog, toProblem } from "../errors.ts";
import { BodyIdleTimeoutError, bodyIdleTimeoutProblem } from "./body-idle-timeout.ts";

interface ValidationIssue {
  instancePath: string;
  message?: string;
  params: Record<string, unknown>;
}

/** Ajv's issues as `{path, message}`, path a JSON Pointer into the part of the request that was wrong. */
function validationErrors(context: string, issues: ValidationIssue[]) {
  return issues.map((issue) => {
    let pointer = issue.instancePath;
    const missing = issue.params.missingProperty ?? issue.params.additionalProperty;
    if (typeof missing === "string") pointer += `/${missing}`;
    let message = issue.message ?? "is invalid";
    if (issue.params.additionalProperty !== undefined) message = "is not a known field";
    if (issue.params.missingProperty !== undefined) message = "is required";
    // A discriminated oneOf (test plan steps) whose tag names no branch: point at the tag itself.
    if (typeof issue.params.tag === "string" && issue.params.error === "mapping") {
      pointer += `/${issue.params.tag}`;
      message = `${JSON.stringify(issue.params.tagValue)} is not a known ${issue.params.tag}`;
    }
    return { path: pointer === "" ? "/" : pointer, in: context, message };
  });
}

/** Turns anything thrown while handling a request into an ApiError; internals never reach the caller. */
function toApiError(error: FastifyError, supportEmail: string | undefined): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof BodyIdleTimeoutError) return bodyIdleTimeoutProblem(error);
  if (error.validation) {
    const errors = validationErrors(error.validationContext ?? "body", error.validation as ValidationIssue[]);
    const first = errors[0];
    return new ApiError("invalid_request", {
      detail: `The request is invalid: ${first ? `${first.in} ${first.path} ${first.message}` : error.message}.`,
      extra: { errors },
    });
  }
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return new ApiError("request_too_large", {
        detail: "The request body is larger than this endpoint accepts.",
      });
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return new ApiError("unsupported_media_type", {
        detail: "This endpoint does not accept that Content-Type.",
      });
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return new ApiError("invalid_request", {
        detail: "The body is empty but Content-Type says JSON.",
        fix: "Send a JSON object as the body, or leave out the Content-Type header when there is no body.",
        extra: { errors: [{ path: "/", in: "body", message: "is empty" }] },
      });
  }
  const status = error.statusCode ?? 500;
  if (status === 400 && (error instanceof SyntaxError || error.code?.startsWith("FST_ERR_CTP"))) {
    return new ApiError("invalid_request", {
      detail: "The body is not valid JSON.",
      fix: "Send a well-formed JSON object (check quotes, commas and brackets) with Content-Type: application/json.",
      extra: { errors: [{ path: "/", in: "body", message: "is not valid JSON" }] },
    });
  }
  if (status >= 400 && status < 500) {
    return new ApiError("invalid_request", { detail: "The request could not be understood." });
  }
  const contact = supportEmail ? `support at ${supportEmail}` : "the operator of this Testbay server";
  return new ApiError("internal_error", {
    detail:
      "The server failed to handle this request. Nothing about the failure is shown here; it was logged.",
    fix: `Contact ${contact} and quote the request_id.`,
  });
}

/** OAuth 2.0 error codes (RFC 6749 §5.2) for the token endpoint's error bodies. */
function oauthError(code: ErrorCode, extra: Record<string, unknown>): string {
  if (typeof extra.error === "string") return extra.error;
  if (code === "invalid_access_token") return "invalid_client";
  if (errorCatalog[code].status >= 500) return "server_error";
  if (code === "rate_limited") return "temporarily_unavailable";
  return "invalid_request";
}

export function sendProblem(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  const problem = toProblem(error, request.id);
  // OAuth clients read token errors only as application/json (RFC 6749 §5.2); the members stay the same.
  const oauth = request.routeOptions.config?.oauthErrors === true;
  if (oauth) {
    problem.error = oauthError(error.code, error.extra);
    problem.error_description = error.detail;
  }
  return reply
    .code(error.status)
    .headers(error.headers)
    .header("cache-control", "no-store")
    .type(oauth ? "application/json" : "application/problem+json")
    .send(problem);
}

export function registerErrorHandling(app: FastifyInstance, supportEmail: string | undefined): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const apiError = toApiError(error, supportEmail);
    if (apiError.status >= 500) request.log.error({ err: error }, "request failed");
    return sendProblem(request, reply, apiError);
  });

  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split("?")[0]?.slice(0, 200) ?? "";
    return sendProblem(
      request,
      reply,
      new ApiError("route_not_found", {
        detail: `${request.method} ${path} is not an endpoint of this server.`,
      }),
    );
  });
}
