import * as oidc from "openid-client";
import type { Clock } from "../../clock.ts";
import type { OidcSettings } from "../../config.ts";
import type { PersonRole } from "../../db/schema.ts";
import { type OidcPending, oidcPendingMs } from "./oidc-state.ts";
import { personRoles } from "./people.service.ts";

/**
 * Why a sign-in through the provider failed, as the sign-in page is told (`/sign-in?error=<code>`): a fixed
 * set, so nothing the provider or the address bar says is echoed to the page.
 */
export type OidcFailureCode =
  | "provider_unreachable"
  | "access_denied"
  | "provider_error"
  | "invalid_state"
  | "sign_in_expired"
  | "email_missing"
  | "email_not_verified"
  | "account_disabled"
  | "organization_missing";

/** A refused sign-in: `code` goes to the page, `message` (for the log) says more. */
export class OidcSignInError extends Error {
  constructor(
    readonly code: OidcFailureCode,
    message: string,
  ) {
    super(message);
    this.name = "OidcSignInError";
  }
}

/** Who the provider says signed in. */
export interface OidcIdentity {
  email: string;
  /** The role the configured claim gives, if the claim is configured and holds one. */
  claimedRole: PersonRole | undefined;
}

/**
 * The server's side of the authorization code flow with PKCE (API.md §10), through openid-client, which
 * checks what the provider sends back: state, nonce, PKCE, the ID token's issuer, audience, signature and
 * expiry. The provider is discovered at the first sign-in, not at start-up, so a provider that is down does
 * not keep the server from starting; a failed discovery is tried again at the next sign-in.
 */
export class OidcSignIn {
  private configuration: Promise<oidc.Configuration> | undefined;

  constructor(
    readonly settings: OidcSettings,
    private readonly clock: Clock,
  ) {}

  private discover(): Promise<oidc.Configuration> {
    if (!this.configuration) {
      // Plain HTTP passed the configuration's check only for a provider on this machine.
      const insecure = new URL(this.settings.issuer).protocol === "http:";
      this.configuration = oidc
        .discovery(
          new URL(this.settings.issuer),
          this.settings.clientId,
          this.settings.clientSecret,
          undefined,
          {
            execute: insecure ? [oidc.allowInsecureRequests] : [],
            timeout: 10,
          },
        )
        .catch((error: unknown) => {
          this.configuration = undefined;
          throw new OidcSignInError(
            "provider_unreachable",
            `Discovering the OpenID provider at ${this.settings.issuer} failed: ${describe(error)}`,
          );
        });
    }
    return this.configuration;
  }

  /** Where to send the person, and what to keep until they come back. */
  async start(redirectUri: string, next: string): Promise<{ url: string; pending: OidcPending }> {
    const configuration = await this.discover();
    const pending: OidcPending = {
      state: oidc.randomState(),
      nonce: oidc.randomNonce(),
      codeVerifier: oidc.randomPKCECodeVerifier(),
      next,
      startedAt: this.clock.now(),
    };
    const url = oidc.buildAuthorizationUrl(configuration, {
      redirect_uri: redirectUri,
      scope: "openid email profile",
      code_challenge: await oidc.calculatePKCECodeChallenge(pending.codeVerifier),
      code_challenge_method: "S256",
      state: pending.state,
      nonce: pending.nonce,
    });
    return { url: url.href, pending };
  }

  /**
   * Redeems the code the provider sent back to `callbackUrl` (redirect URI plus the provider's query) and
   * reads who signed in: from the ID token, and from the userinfo endpoint, where many providers put the
   * email and other scope claims rather than in the ID token.
   */
  async finish(callbackUrl: URL, pending: OidcPending | undefined): Promise<OidcIdentity> {
    if (!pending) {
      throw new OidcSignInError(
        "invalid_state",
        "The callback came without a sign-in this browser started (no or an unreadable state cookie).",
      );
    }
    if (this.clock.now() - pending.startedAt > oidcPendingMs) {
      throw new OidcSignInError("sign_in_expired", "The sign-in was started more than 10 minutes ago.");
    }
    // openid-client checks this too; checked first so that a mismatch gets its own code, not a generic one.
    // An answer carrying an error (the person refused) is left to openid-client, which reads it.
    if (!callbackUrl.searchParams.has("error") && callbackUrl.searchParams.get("state") !== pending.state) {
      throw new OidcSignInError(
        "invalid_state",
        "The callback's state is not the one of the sign-in this browser started.",
      );
    }
    const configuration = await this.discover();
    let claims: Record<string, unknown>;
    try {
      // The redirect_uri of the token request is callbackUrl without its query: the one start() sent.
      const tokens = await oidc.authorizationCodeGrant(configuration, callbackUrl, {
        pkceCodeVerifier: pending.codeVerifier,
        expectedState: pending.state,
        expectedNonce: pending.nonce,
        idTokenExpected: true,
      });
      const idToken = tokens.claims();
      if (!idToken) throw new OidcSignInError("provider_error", "The token response has no ID token.");
      claims = { ...idToken };
      if (configuration.serverMetadata().userinfo_endpoint) {
        const userInfo = await oidc.fetchUserInfo(configuration, tokens.access_token, idToken.sub);
        claims = { ...idToken, ...pickDefined(userInfo) };
      }
    } catch (error) {
      throw asSignInError(error);
    }
    return this.identityFrom(claims);
  }

  private identityFrom(claims: Record<string, unknown>): OidcIdentity {
    const email = typeof claims.email === "string" ? claims.email.trim() : "";
    if (email === "") {
      throw new OidcSignInError(
        "email_missing",
        "The provider sent no email claim: the client must be allowed the `email` scope.",
      );
    }
    // Some providers send the boolean as a string.
    if (claims.email_verified !== true && claims.email_verified !== "true") {
      throw new OidcSignInError(
        "email_not_verified",
        `The provider has not verified ${email} (email_verified is not true).`,
      );
    }
    const roleClaim = this.settings.roleClaim;
    return { email, claimedRole: roleClaim === undefined ? undefined : roleFrom(claims[roleClaim]) };
  }
}

/**
 * A role from the claim's value: one role name, or a list (of groups, say) whose highest role counts.
 * Anything else gives no role, and the default applies.
 */
export function roleFrom(value: unknown): PersonRole | undefined {
  const names = Array.isArray(value) ? value : [value];
  const held = personRoles.filter((role) => names.includes(role));
  return held.at(-1);
}

/** The userinfo claims that say something: one with `null` must not hide the ID token's. */
function pickDefined(claims: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(claims).filter(([, value]) => value !== null && value !== undefined),
  );
}

function asSignInError(error: unknown): OidcSignInError {
  if (error instanceof OidcSignInError) return error;
  if (error instanceof oidc.AuthorizationResponseError) {
    // The person said no, or the provider would not let them in: what they did, not what went wrong.
    const code = error.error === "access_denied" ? "access_denied" : "provider_error";
    return new OidcSignInError(
      code,
      `The provider answered ${error.error}: ${error.error_description ?? ""}`,
    );
  }
  return new OidcSignInError("provider_error", describe(error));
}

function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" ? `${code}: ${error.message}` : error.message;
}
