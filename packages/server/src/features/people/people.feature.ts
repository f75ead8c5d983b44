import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import type { BackgroundJobs } from "../../background-jobs.ts";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { AuditLog } from "../audit/index.ts";
import type { SigningKey } from "../auth/index.ts";
import type { RateLimiter } from "../ratelimit/index.ts";
import { registerHttpsProxyWarning } from "./https-proxy-warning.ts";
import { defaultLoginLimits, type LoginLimitSettings } from "./login-limits.ts";
import { oidcRoutes } from "./oidc.routes.ts";
import { OidcSignIn } from "./oidc-sign-in.ts";
import { OidcStateSealer } from "./oidc-state.ts";
import { PeopleRepo } from "./people.repo.ts";
import { peopleRoutes } from "./people.routes.ts";
import { PeopleService } from "./people.service.ts";
import { CookieSessionAuthentication } from "./session-authentication.ts";
import { registerCookieCodec } from "./session-cookie.ts";

export interface PeopleDeps {
  database: DatabaseHandle;
  clock: Clock;
  /** Where the warning about an HTTPS proxy in front of a non-https TESTBAY_PUBLIC_URL goes. */
  logger: FastifyBaseLogger;
  config: Pick<Config, "publicUrl" | "oidc" | "trustedProxies">;
  audit: AuditLog;
  /** Its kid names the deployment in the sign-in limiter's keys; its private key seals the OIDC state. */
  signingKey: SigningKey;
  /** Where failed sign-ins are counted (features/ratelimit). */
  limiter: RateLimiter;
  /** Failed sign-ins allowed per account and per address (AppOptions.loginLimits). */
  loginLimits: LoginLimitSettings | undefined;
}

/**
 * People's composition root (API.md §10): accounts, sessions (which authentication reads from the cookie),
 * sign-in with a password or OpenID Connect, and the hourly deletion of idle sessions.
 */
export function createPeople({
  database,
  clock,
  logger,
  config,
  audit,
  signingKey,
  limiter,
  loginLimits,
}: PeopleDeps) {
  const people = new PeopleService(new PeopleRepo(database.db), clock, audit);
  const sessions = new CookieSessionAuthentication(people, clock, config.publicUrl);
  return {
    people,
    sessions,
    /**
     * Before authentication's hooks (app.ts), which read the session from the cookie: the cookie codec, and a
     * warning when requests come through an HTTPS proxy to a server that does not know its https URL.
     */
    async registerHooks(app: FastifyInstance): Promise<void> {
      await registerCookieCodec(app);
      registerHttpsProxyWarning(app, logger, config.publicUrl, config.trustedProxies);
    },
    async register(app: FastifyInstance): Promise<void> {
      await app.register(peopleRoutes, {
        people,
        sessions,
        limiter,
        loginLimits: loginLimits ?? defaultLoginLimits,
        clock,
        publicUrl: config.publicUrl,
        deployment: signingKey.kid,
        oidcEnabled: config.oidc !== undefined,
      });
      await app.register(oidcRoutes, {
        people,
        oidc: config.oidc && new OidcSignIn(config.oidc, clock),
        sealer: new OidcStateSealer(signingKey.privateKey),
        publicUrl: config.publicUrl,
      });
    },
    async start(jobs: BackgroundJobs): Promise<void> {
      await jobs.hourly("delete idle sessions", () => people.purgeIdleSessions());
    },
  };
}
