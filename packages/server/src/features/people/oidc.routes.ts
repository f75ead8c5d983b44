import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import { ApiError } from "../../errors.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { type OidcFailureCode, type OidcSignIn, OidcSignInError } from "./oidc-sign-in.ts";
import { type OidcStateSealer, oidcPendingMs, oidcStateCookieName, safeNextPath } from "./oidc-state.ts";
import type { PeopleService } from "./people.service.ts";
import { sessionCookie } from "./session-cookie.ts";

export interface OidcRoutesOptions {
  people: PeopleService;
  /** Undefined when single sign-on is not configured: both routes then answer 404 oidc_not_configured. */
  oidc: OidcSignIn | undefined;
  sealer: OidcStateSealer;
  /** TESTBAY_PUBLIC_URL: its origin is the callback's; an https one makes the cookies `Secure`. */
  publicUrl: string | undefined;
}

const callbackPath = "/auth/oidc/callback";

const redirected = Type.Null({ description: "302 Found: Location says where the browser goes next." });

/** Single sign-on through an OpenID provider (API.md §10): the two legs of the authorization code flow. */
export const oidcRoutes: FastifyPluginAsyncTypebox<OidcRoutesOptions> = async (app, options) => {
  const { people, sealer } = options;
  const secureCookie = (request: FastifyRequest) =>
    request.protocol === "https" || options.publicUrl?.startsWith("https:") === true;

  const configured = (): OidcSignIn => {
    if (options.oidc) return options.oidc;
    throw new ApiError("oidc_not_configured", {
      detail: "This server has no OpenID provider to sign in with.",
    });
  };

  /**
   * The callback URL the provider sends the person back to, registered with the provider: on the public
   * URL's origin when it is set (behind a proxy the request may not know it), else on the request's.
   */
  const redirectUri = (request: FastifyRequest) => {
    const origin = options.publicUrl
      ? new URL(options.publicUrl).origin
      : `${request.protocol}://${request.host}`;
    return `${origin}${callbackPath}`;
  };

  /** The pending sign-in lives only as long as it may be finished, and only where it is read. */
  const stateCookie = (request: FastifyRequest, value: string, maxAgeSeconds: number) =>
    app.serializeCookie(oidcStateCookieName, value, {
      httpOnly: true,
      sameSite: "lax",
      path: "/auth/oidc",
      secure: secureCookie(request),
      maxAge: maxAgeSeconds,
    });

  /** Back to the sign-in page with a code it explains; the details go to the log, never to the page. */
  const failed = (request: FastifyRequest, reply: FastifyReply, error: unknown) => {
    if (!(error instanceof OidcSignInError)) throw error;
    request.log.warn({ oidc_error: error.code, reason: error.message }, "single sign-on refused");
    return toSignIn(reply, error.code);
  };

  const toSignIn = (reply: FastifyReply, code: OidcFailureCode) =>
    reply.header("cache-control", "no-store").redirect(`/sign-in?error=${code}`, 302);

  app.get(
    "/auth/oidc/start",
    {
      config: { auth: "public" },
      schema: {
        summary: "Sign in through the OpenID provider",
        description:
          "Sends the browser to the configured OpenID provider (authorization code flow with PKCE) and keeps what the callback checks in a short-lived, encrypted, HttpOnly cookie. `next` is where to go once signed in: a path on this site (anything else becomes /runs). 404 oidc_not_configured when single sign-on is not set up; when the provider cannot be reached, to /sign-in?error=provider_unreachable.",
        tags: ["people"],
        security: [],
        querystring: Type.Object({
          next: Type.Optional(
            Type.String({ maxLength: 2048, description: "A path on this site, e.g. /runs." }),
          ),
        }),
        response: { 302: redirected, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const oidc = configured();
      try {
        const { url, pending } = await oidc.start(redirectUri(request), safeNextPath(request.query.next));
        return reply
          .header("cache-control", "no-store")
          .header("set-cookie", stateCookie(request, sealer.seal(pending), oidcPendingMs / 1000))
          .redirect(url, 302);
      } catch (error) {
        return failed(request, reply, error);
      }
    },
  );

  app.get(
    callbackPath,
    {
      config: { auth: "public" },
      schema: {
        summary: "Finish signing in through the OpenID provider",
        description:
          "Where the provider sends the browser back. Checks the answer (state, nonce, PKCE, the ID token's issuer, audience and expiry), finds the person by their verified email or creates them in TESTBAY_OIDC_ORG with TESTBAY_OIDC_DEFAULT_ROLE (or the role TESTBAY_OIDC_ROLE_CLAIM gives), starts a session as POST /auth/login does and sends the browser to the `next` of /auth/oidc/start. A refusal goes to /sign-in?error=<code>: access_denied, provider_error, provider_unreachable, invalid_state, sign_in_expired, email_missing, email_not_verified, account_disabled, organization_missing.",
        tags: ["people"],
        security: [],
        querystring: Type.Object(
          {
            code: Type.Optional(Type.String({ maxLength: 4096 })),
            state: Type.Optional(Type.String({ maxLength: 1024 })),
            error: Type.Optional(Type.String({ maxLength: 256 })),
          },
          { additionalProperties: true },
        ),
        response: { 302: redirected, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const oidc = configured();
      // The pending sign-in is used once, whatever happens next.
      reply.header("set-cookie", stateCookie(request, "", 0));
      try {
        const header = request.headers.cookie;
        const sealed = header === undefined ? undefined : app.parseCookie(header)[oidcStateCookieName];
        const pending = sealed ? sealer.open(sealed) : undefined;
        const callbackUrl = new URL(redirectUri(request));
        callbackUrl.search = new URL(request.url, "http://callback.invalid").search;
        const identity = await oidc.finish(callbackUrl, pending);
        const { organization, defaultRole } = oidc.settings;
        const user = await people.personFromProvider({
          email: identity.email,
          org: organization,
          defaultRole,
          claimedRole: identity.claimedRole,
        });
        if (!user) {
          throw new OidcSignInError(
            "organization_missing",
            `Organization ${JSON.stringify(organization)} (TESTBAY_OIDC_ORG) does not exist; create it with: testbay-server org create ${organization}`,
          );
        }
        if (user.disabledAt) {
          throw new OidcSignInError("account_disabled", `The account of ${user.email} is disabled.`);
        }
        const sessionId = await people.startSession(user);
        return reply
          .header("cache-control", "no-store")
          .header("set-cookie", sessionCookie(app, sessionId, secureCookie(request)))
          .redirect(safeNextPath(pending?.next), 302);
      } catch (error) {
        return failed(request, reply, error);
      }
    },
  );
};
