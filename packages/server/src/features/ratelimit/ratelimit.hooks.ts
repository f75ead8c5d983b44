import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { RateLimitSettings } from "../../config.ts";
import type { ClientRole } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import type { RateLimitPolicy } from "./gcra.ts";
import type { RateLimiter } from "./limiter.ts";

export interface RateLimitPolicies {
  default: RateLimitPolicy;
  agent: RateLimitPolicy;
}

export function policiesFrom(settings: { rateLimit: RateLimitSettings; agentRateLimit: RateLimitSettings }) {
  return {
    default: { name: "default", ...settings.rateLimit },
    agent: { name: "agent", ...settings.agentRateLimit },
  } satisfies RateLimitPolicies;
}

/** Agents heartbeat and stream results, so they get their own, larger bucket. */
export function policyForRole(policies: RateLimitPolicies, role: ClientRole | undefined): RateLimitPolicy {
  return role === "agent" ? policies.agent : policies.default;
}

/** `RateLimit-Policy` as in draft-ietf-httpapi-ratelimit-headers: quota and window (the time to refill it). */
function policyHeader(policy: RateLimitPolicy): string {
  const window = Math.max(1, Math.round(policy.burst / policy.perSecond));
  return `"${policy.name}";q=${policy.burst};w=${window}`;
}

/**
 * Charges one request to `key` and sets the RateLimit headers; throws 429 `rate_limited` with a whole-second
 * Retry-After when the bucket is empty.
 */
export async function chargeRequest(
  limiter: RateLimiter,
  reply: FastifyReply,
  key: string,
  policy: RateLimitPolicy,
): Promise<void> {
  const decision = await limiter.consume(key, policy);
  reply.header("ratelimit-policy", policyHeader(policy));
  reply.header(
    "ratelimit",
    `"${policy.name}";r=${decision.remaining};t=${Math.ceil(decision.nextTokenMs / 1000)}`,
  );
  if (!decision.allowed) {
    const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
    throw new ApiError("rate_limited", {
      detail: `This client made more than ${policy.burst} requests at once or more than ${policy.perSecond} per second over time.`,
      headers: { "retry-after": String(retryAfter) },
      extra: { retry_after_seconds: retryAfter },
    });
  }
}

/**
 * Limits every request per authenticated client (per IP for public routes). Registered after the
 * authentication hook, so it knows the client; routes marked `rateLimit: "route"` charge themselves.
 */
export function registerRateLimiting(
  app: FastifyInstance,
  limiter: RateLimiter,
  policies: RateLimitPolicies,
) {
  app.addHook("onRequest", async (request: FastifyRequest, reply: FastifyReply) => {
    const mode = request.routeOptions.config?.rateLimit;
    if (mode === "skip" || mode === "route") return;
    const principal = request.principal;
    const key = principal ? `client:${principal.clientId}` : `ip:${request.ip}`;
    await chargeRequest(limiter, reply, key, policyForRole(policies, principal?.role));
  });
}
