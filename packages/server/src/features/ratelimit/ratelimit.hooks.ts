import type { FastifyInstance, FastifyReply } from "fastify";
import type { RateLimitSettings } from "../../config.ts";
import type { ClientRole } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import type { RateLimitDecision, RateLimitPolicy } from "./gcra.ts";
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

/** The header values of a policy that never change: computed once per policy, not per response. */
interface PolicyHeaders {
  /** `RateLimit-Policy` as in draft-ietf-httpapi-ratelimit-headers: quota and window (the time to refill it). */
  policy: string;
  /** The start of every `RateLimit` value: `"name";r=`. */
  remainingPrefix: string;
}

const policyHeaders = new WeakMap<RateLimitPolicy, PolicyHeaders>();

function headersOf(policy: RateLimitPolicy): PolicyHeaders {
  let headers = policyHeaders.get(policy);
  if (!headers) {
    const window = Math.max(1, Math.round(policy.burst / policy.perSecond));
    headers = {
      policy: `"${policy.name}";q=${policy.burst};w=${window}`,
      remainingPrefix: `"${policy.name}";r=`,
    };
    policyHeaders.set(policy, headers);
  }
  return headers;
}

/**
 * Sets the RateLimit headers for a decision; returns the 429 `rate_limited` error, with a whole-second
 * Retry-After, when the request is refused.
 */
function applyDecision(
  reply: FastifyReply,
  policy: RateLimitPolicy,
  decision: RateLimitDecision,
  detail = `This client made more than ${policy.burst} requests at once or more than ${policy.perSecond} per second over time.`,
): ApiError | undefined {
  const headers = headersOf(policy);
  reply.header("ratelimit-policy", headers.policy);
  reply.header(
    "ratelimit",
    `${headers.remainingPrefix}${decision.remaining};t=${Math.ceil(decision.nextTokenMs / 1000)}`,
  );
  if (decision.allowed) return undefined;
  const retryAfter = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
  return new ApiError("rate_limited", {
    detail,
    headers: { "retry-after": String(retryAfter) },
    extra: { retry_after_seconds: retryAfter },
  });
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
  const refused = applyDecision(reply, policy, await limiter.consume(key, policy));
  if (refused) throw refused;
}

/**
 * For counts charged only when a call fails (API.md §1: failed token calls): throws 429 `rate_limited` when
 * the count of `key` is spent, charging nothing; sets the RateLimit headers of that count otherwise.
 */
export async function refuseWhenFailuresSpent(
  limiter: RateLimiter,
  reply: FastifyReply,
  key: string,
  policy: RateLimitPolicy,
  detail: string,
): Promise<void> {
  const refused = applyDecision(reply, policy, await limiter.peek(key, policy), detail);
  if (refused) throw refused;
}

/** Charges a failed call, already answered, to `key`: sets the RateLimit headers, never refuses. */
export async function chargeFailure(
  limiter: RateLimiter,
  reply: FastifyReply,
  key: string,
  policy: RateLimitPolicy,
): Promise<void> {
  applyDecision(reply, policy, await limiter.consume(key, policy));
}

/**
 * Limits every request per authenticated client (per IP for public routes). Registered after the
 * authentication hook, so it knows the client; routes marked `rateLimit: "route"` charge themselves.
 * `deployment` (the signing key's ID, the same on every instance of one database) keeps the per-address
 * buckets of deployments that share a Redis apart: a client ID is unique everywhere, an address is not.
 * Written with `done` rather than as an async function: with the in-memory limiter the whole hook is
 * synchronous, which saves a promise per request.
 */
export function registerRateLimiting(
  app: FastifyInstance,
  limiter: RateLimiter,
  policies: RateLimitPolicies,
  deployment: string,
) {
  const consumeNow = limiter.consumeNow?.bind(limiter);
  app.addHook("onRequest", (request, reply, done) => {
    const mode = request.routeOptions.config?.rateLimit;
    if (mode === "skip" || mode === "route") {
      done();
      return;
    }
    const principal = request.principal;
    const key = principal ? `client:${principal.clientId}` : `ip:${deployment}:${request.ip}`;
    const policy = policyForRole(policies, principal?.role);
    if (consumeNow) {
      done(applyDecision(reply, policy, consumeNow(key, policy)));
      return;
    }
    limiter.consume(key, policy).then((decision) => done(applyDecision(reply, policy, decision)), done);
  });
}
