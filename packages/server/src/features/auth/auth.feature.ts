import type { FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { ClientsService } from "../clients/index.ts";
import type { RateLimiter, RateLimitPolicies } from "../ratelimit/index.ts";
import { authRoutes } from "./auth.routes.ts";
import { registerAuthentication, type SessionAuthentication } from "./authenticate.ts";
import type { SigningKey } from "./signing-key.ts";
import { TokenService } from "./tokens.ts";

export interface AuthDeps {
  /** Loaded by app.ts first (loadSigningKey): rate limiting, sign-in and webhook secrets use it too. */
  signingKey: SigningKey;
  config: Pick<Config, "audience" | "publicUrl">;
  clock: Clock;
  clients: ClientsService;
  /** A signed-in person's session cookie, as the dashboard sends it (people/). */
  sessions: SessionAuthentication;
  rateLimiting: { limiter: RateLimiter; policies: RateLimitPolicies };
}

/** Authentication's composition root: tokens, the hook that says who calls, and the token endpoint. */
export function createAuth({ signingKey, config, clock, clients, sessions, rateLimiting }: AuthDeps) {
  const tokens = new TokenService(signingKey, config.audience, clock);
  return {
    tokens,
    /** Who is calling (a token, or a person's session): before anything that depends on it (rate limits). */
    registerHooks(app: FastifyInstance): void {
      registerAuthentication(app, tokens, clients, sessions);
    },
    async register(app: FastifyInstance): Promise<void> {
      await app.register(authRoutes, {
        tokens,
        clients,
        limiter: rateLimiting.limiter,
        policies: rateLimiting.policies,
        clock,
        publicUrl: config.publicUrl,
        deployment: signingKey.kid,
      });
    },
  };
}
