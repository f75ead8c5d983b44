import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { Clock } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import type { RateLimiter } from "../ratelimit/index.ts";
import { type LoginLimitSettings, SignInSlowdown } from "./login-limits.ts";
import { passwordProblem } from "./passwords.ts";
import { foldEmail, type UserRecord } from "./people.repo.ts";
import { LoginBody, LoginResponse, PasswordChangeBody, SessionResponse } from "./people.schemas.ts";
import { type PeopleService, signInCandidateLimit } from "./people.service.ts";
import type { CookieSessionAuthentication } from "./session-authentication.ts";
import { clearedSessionCookie, sessionCookie } from "./session-cookie.ts";
import { csrfTokenFor } from "./session-ids.ts";
import { usersRoutes } from "./users.routes.ts";

export interface PeopleRoutesOptions {
  people: PeopleService;
  sessions: CookieSessionAuthentication;
  limiter: RateLimiter;
  loginLimits: LoginLimitSettings;
  /** The server's clock: slowed-down sign-ins wait on it (login-limits.ts). */
  clock: Clock;
  /** TESTBAY_PUBLIC_URL: an https one makes the cookie `Secure`. */
  publicUrl: string | undefined;
  /**
   * Names this deployment in the limiter's keys (its signing key's ID, the same on every instance of one
   * database): two deployments sharing a Redis count their sign-in failures apart, as they are different
   * services with different accounts.
   */
  deployment: string;
  /** Single sign-on is configured: a signed-out session answer says so (`oidc: true`). */
  oidcEnabled: boolean;
}

const personView = (user: UserRecord) => ({ email: user.email, role: user.role, org: user.organizationName });

/** Sign-in for people (API.md §10), outside /v1: the dashboard's only calls that are not the API's. */
export const peopleRoutes: FastifyPluginAsyncTypebox<PeopleRoutesOptions> = async (app, options) => {
  const { people, sessions, limiter } = options;
  const slowdown = new SignInSlowdown(limiter, options.clock, options.loginLimits);
  const secureCookie = (request: FastifyRequest) =>
    request.protocol === "https" || options.publicUrl?.startsWith("https:") === true;

  /** The failure counts a sign-in attempt (or a password change) is charged to: its account and its address. */
  const countsOf = (request: FastifyRequest, email: string) => [
    slowdown.account(`${options.deployment}:${foldEmail(email)}`),
    slowdown.address(`${options.deployment}:${request.ip}`),
  ];

  /**
   * After repeated failures, the attempt waits before its password is checked (login-limits.ts says why);
   * it is then answered as any other, so the right password still signs in.
   */
  const slowDownAfterFailures = async (request: FastifyRequest, email: string) => {
    const delayMs = await slowdown.delayFor(countsOf(request, email));
    if (delayMs === 0) return;
    request.log.info(
      { delay_ms: delayMs, address: request.ip },
      "sign-in slowed down after repeated failures",
    );
    await slowdown.wait(delayMs);
  };

  const chargeFailure = (request: FastifyRequest, email: string) =>
    slowdown.chargeFailure(countsOf(request, email));

  const wrongCredentials = (detail: string) => new ApiError("invalid_credentials", { detail });

  /** The caller's live session, or 401: for the routes that only make sense signed in. */
  const signedIn = async (request: FastifyRequest) => {
    const sessionId = sessions.sessionIdOf(request);
    if (sessionId === undefined) {
      throw new ApiError("invalid_access_token", {
        reason: "missing",
        detail: "The request has no session cookie.",
        fix: "Sign in first: POST /auth/login {email, password}.",
      });
    }
    const session = await sessions.resume(sessionId);
    sessions.checkCsrf(request, sessionId);
    return { sessionId, user: session.user };
  };

  const noStore = (reply: FastifyReply) => reply.header("cache-control", "no-store");

  app.post(
    "/auth/login",
    {
      config: { auth: "public" },
      bodyLimit: 8192,
      schema: {
        summary: "Sign a person in",
        description: `Checks the email (case-insensitive) and password and starts a session: 200 with the person and the CSRF token, and the session cookie (HttpOnly, SameSite=Lax, Secure behind HTTPS; ends after 12 hours without use). 401 invalid_credentials otherwise, without a cookie. Accounts belong to an organization, and one email can have an account in several: the password is checked against each (at most ${signInCandidateLimit} without org), and the one it opens is signed in. When it opens accounts in several organizations, 409 organization_required lists them (organizations: their names) and the request is sent again with org; org also picks the account directly. Failed sign-ins count per account and per client address (X-Forwarded-For only from the proxies in TESTBAY_TRUSTED_PROXIES); past 10 for an account or 30 for an address within 15 minutes, each attempt waits before it is checked, 1 s, doubling with each further failure, at most 30 s, and is then answered as usual: never refused for the right password.`,
        tags: ["people"],
        security: [],
        body: LoginBody,
        response: { 200: LoginResponse, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { email, password, org } = request.body;
      await slowDownAfterFailures(request, email);
      const opened = await people.accountsWithPassword(email, password, org);
      if (opened.length === 0) {
        await chargeFailure(request, email);
        throw wrongCredentials(
          org === undefined
            ? "The email or the password is wrong."
            : `The email, the password or the organization (${org}) is wrong.`,
        );
      }
      // A disabled account is named only when the password opens no other.
      const active = opened.filter((account) => !account.disabledAt);
      if (active.length > 1) {
        // Naming the organizations tells the caller nothing new: they have just proved the password of each.
        const organizations = active.map((account) => account.organizationName);
        throw new ApiError("organization_required", {
          detail: `This email and password open accounts in several organizations: ${organizations.join(", ")}.`,
          fix: `Send the sign-in again with org set to one of them, for example {"email": ..., "password": ..., "org": "${organizations[0]}"}.`,
          extra: { organizations },
        });
      }
      const user = active[0] ?? (opened[0] as UserRecord);
      if (user.disabledAt) {
        throw new ApiError("forbidden", {
          reason: "account_disabled",
          detail: "This account is disabled.",
          fix: "Ask an administrator of your organization to enable it (testbay-server user enable EMAIL).",
        });
      }
      const sessionId = await people.startSession(user);
      noStore(reply).header("set-cookie", sessionCookie(app, sessionId, secureCookie(request)));
      return { user: personView(user), csrf_token: csrfTokenFor(sessionId) };
    },
  );

  app.post(
    "/auth/logout",
    {
      config: { auth: "public" },
      schema: {
        summary: "Sign out",
        description:
          "Ends the session at once on every server instance and clears the cookie: 204. Needs the x-csrf-token header like any cookie-authenticated change (403 forbidden, reason csrf, otherwise). Without a live session it only clears the cookie.",
        tags: ["people"],
        security: [],
        response: { 204: Type.Null({ description: "Signed out" }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const sessionId = sessions.sessionIdOf(request);
      const live = sessionId === undefined ? undefined : await people.resumeSession(sessionId);
      if (sessionId !== undefined && live) {
        sessions.checkCsrf(request, sessionId);
        await people.endSession(sessionId);
      }
      return noStore(reply)
        .header("set-cookie", clearedSessionCookie(app, secureCookie(request)))
        .code(204)
        .send(null);
    },
  );

  app.get(
    "/auth/session",
    {
      config: { auth: "public" },
      schema: {
        summary: "Who is signed in",
        description:
          "The signed-in person and the CSRF token their changes must carry (x-csrf-token), or {signed_in: false}, with oidc: true when single sign-on is configured (GET /auth/oidc/start). Using a session keeps it alive (12 hours idle expiry).",
        tags: ["people"],
        security: [],
        response: { 200: SessionResponse, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      noStore(reply);
      const sessionId = sessions.sessionIdOf(request);
      const session = sessionId === undefined ? undefined : await people.resumeSession(sessionId);
      if (sessionId === undefined || !session) {
        return options.oidcEnabled
          ? { signed_in: false as const, oidc: true as const }
          : { signed_in: false as const };
      }
      return {
        signed_in: true as const,
        user: personView(session.user),
        csrf_token: csrfTokenFor(sessionId),
      };
    },
  );

  app.post(
    "/auth/password",
    {
      config: { auth: "public" },
      bodyLimit: 8192,
      schema: {
        summary: "Change one's own password",
        description:
          "Signed in, with the x-csrf-token header: checks current_password, sets new_password (at least 12 characters) and ends the person's other sessions: 204. 401 invalid_credentials when current_password is wrong (counted, and slowed down, like a failed sign-in); 400 invalid_request when the new one is too short.",
        tags: ["people"],
        security: [],
        body: PasswordChangeBody,
        response: { 204: Type.Null({ description: "Changed" }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { sessionId, user } = await signedIn(request);
      const problem = passwordProblem(request.body.new_password);
      if (problem) {
        throw new ApiError("invalid_request", {
          detail: `The new password ${problem}.`,
          fix: "Choose a longer password: at least 12 characters (a passphrase of a few words is easy to remember).",
          extra: { errors: [{ path: "/new_password", in: "body", message: problem }] },
        });
      }
      await slowDownAfterFailures(request, user.email);
      if (!(await people.isOwnPassword(user, request.body.current_password))) {
        await chargeFailure(request, user.email);
        throw wrongCredentials("current_password is not this account's password.");
      }
      await people.setPassword(user, request.body.new_password, sessionId);
      return noStore(reply).code(204).send(null);
    },
  );

  // The organization's people, for its admins (under /v1, like every other call the dashboard makes).
  await app.register(usersRoutes, { people });
};
