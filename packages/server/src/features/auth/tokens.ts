import { randomBytes } from "node:crypto";
import { decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT } from "jose";
import type { Clock } from "../../clock.ts";
import type { ClientRole } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import type { SigningKey } from "./signing-key.ts";

export const tokenLifetimeSeconds = 24 * 60 * 60;
export const tokenIssuer = "testbay";
const algorithm = "EdDSA";

export interface TokenSubject {
  clientId: string;
  organizationId: string;
  role: ClientRole;
}

export interface VerifiedToken extends TokenSubject {
  expiresAt: number;
  /** Milliseconds, as `iat` says: compared with the time the client's secret was last rotated. */
  issuedAt: number;
}

export type InvalidTokenReason =
  | "missing"
  | "bearer_scheme"
  | "malformed"
  | "bad_signature"
  | "expired"
  | "wrong_audience"
  | "client_disabled"
  | "token_revoked"
  | "session_expired"
  | "invalid_client";

/** What to do about each way a token can be wrong. */
const remedies: Record<InvalidTokenReason, (audience: string) => string> = {
  missing: () =>
    "Send the access token in the x-api-key header (x-api-key: <access_token>); get one with POST /v1/oauth/token.",
  bearer_scheme: () =>
    "Send the token as x-api-key: <access_token>, not as Authorization: Bearer <access_token>.",
  malformed: () =>
    "Send the access_token exactly as POST /v1/oauth/token returned it, in the x-api-key header, with no 'Bearer ' prefix, quotes or spaces.",
  bad_signature: () =>
    "This token was not issued by this server or was altered: request a fresh token from this server's POST /v1/oauth/token.",
  expired: () =>
    "Tokens live 24 hours: request a fresh token at the start of each pipeline run (export TESTBAY_TOKEN=$(testbay token)).",
  wrong_audience: (audience) => `Request a token for this server's audience: audience "${audience}".`,
  client_disabled: () => "This client was disabled by an administrator: ask them for new client credentials.",
  token_revoked: () =>
    "The client's secret was rotated (or the client re-enabled) after this token was issued: request a new token (POST /v1/oauth/token, or testbay token), with the new secret after a rotation.",
  session_expired: () =>
    "Sign in again (POST /auth/login): sessions end on sign-out, after 12 hours without use, when the password is changed elsewhere or the account is disabled. Machines send an access token as x-api-key instead.",
  invalid_client: (audience) =>
    `Check the client ID, client secret and audience (this server's audience is "${audience}").`,
};

export function invalidToken(reason: InvalidTokenReason, detail: string, audience: string): ApiError {
  return new ApiError("invalid_access_token", { reason, detail, fix: remedies[reason](audience) });
}

/** How many verified tokens to remember; a pipeline run uses one, so this covers many concurrent runs. */
const verifiedCacheSize = 10_000;

/** Issues and verifies access tokens: EdDSA JWTs, algorithm pinned, bound to one client and organization. */
export class TokenService {
  /**
   * Tokens whose signature and claims were verified, until they expire. Checking an Ed25519 signature costs
   * about 100 µs, more than the rest of a typical request; a token is the same bytes on every call of a
   * pipeline run, so it is checked once. Only successes are kept, and only the exact token string hits.
   */
  private readonly verified = new Map<string, VerifiedToken>();
  /**
   * The token of the last request, verified: a pipeline run sends the same token on every call, and comparing
   * two strings is cheaper than hashing a new one (each request's header is a new string) for the Map.
   */
  private lastToken = "";
  private lastVerified: VerifiedToken | undefined;

  constructor(
    private readonly key: SigningKey,
    readonly audience: string,
    private readonly clock: Clock,
  ) {}

  async issue(subject: TokenSubject): Promise<{ token: string; expiresAt: number }> {
    const now = this.clock.now();
    const expiresAt = Math.floor(now / 1000) + tokenLifetimeSeconds;
    const token = await new SignJWT({ org: subject.organizationId, role: subject.role })
      .setProtectedHeader({ alg: algorithm, kid: this.key.kid, typ: "JWT" })
      .setIssuer(tokenIssuer)
      .setSubject(subject.clientId)
      .setAudience(this.audience)
      // In milliseconds (a NumericDate may have a fraction, RFC 7519 §2): a token minted in the same second
      // as a secret rotation, just before it, must be told apart from one minted just after.
      .setIssuedAt(now / 1000)
      .setExpirationTime(expiresAt)
      .setJti(randomBytes(12).toString("base64url"))
      .sign(this.key.privateKey);
    return { token, expiresAt: expiresAt * 1000 };
  }

  /**
   * The token, if this exact string was verified before and has not expired since; otherwise undefined, and
   * `verify` decides. Synchronous, so the authentication hook of a request with a known token needs no promise.
   */
  verifiedBefore(token: string): VerifiedToken | undefined {
    const known = token === this.lastToken ? this.lastVerified : this.verified.get(token);
    if (!known || this.clock.now() >= known.expiresAt) return undefined;
    this.lastToken = token;
    this.lastVerified = known;
    return known;
  }

  /** Verifies signature, algorithm, issuer, audience and expiry; throws `invalid_access_token` with a reason. */
  async verify(token: string): Promise<VerifiedToken> {
    const known = this.verifiedBefore(token);
    if (known) return known;
    this.verified.delete(token);
    const verified = await this.verifyAfresh(token);
    if (this.verified.size >= verifiedCacheSize) {
      // Maps iterate in insertion order: drop the oldest entry.
      const oldest = this.verified.keys().next();
      if (!oldest.done) this.verified.delete(oldest.value);
    }
    this.verified.set(token, verified);
    return verified;
  }

  private async verifyAfresh(token: string): Promise<VerifiedToken> {
    const fail = (reason: InvalidTokenReason, detail: string) => invalidToken(reason, detail, this.audience);
    if (token.length > 4096 || !/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(token)) {
      throw fail(
        "malformed",
        "The x-api-key header does not hold a token of the form header.payload.signature.",
      );
    }
    let header: ReturnType<typeof decodeProtectedHeader>;
    try {
      header = decodeProtectedHeader(token);
    } catch {
      throw fail("malformed", "The token's header cannot be decoded.");
    }
    if (header.alg !== algorithm) {
      throw fail(
        "bad_signature",
        `The token is signed with algorithm ${String(header.alg)}; only EdDSA is accepted.`,
      );
    }
    if (header.kid !== this.key.kid) throw fail("bad_signature", "The token was signed by an unknown key.");

    try {
      const { payload } = await jwtVerify(token, this.key.publicKey, {
        algorithms: [algorithm],
        issuer: tokenIssuer,
        audience: this.audience,
        currentDate: new Date(this.clock.now()),
        requiredClaims: ["sub", "exp", "iat"],
      });
      const { sub, org, role, exp, iat } = payload;
      if (
        typeof sub !== "string" ||
        typeof org !== "string" ||
        typeof exp !== "number" ||
        typeof iat !== "number" ||
        !isRole(role)
      ) {
        throw fail("malformed", "The token lacks its client, organization or role.");
      }
      return {
        clientId: sub,
        organizationId: org,
        role,
        expiresAt: exp * 1000,
        issuedAt: Math.round(iat * 1000),
      };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      if (error instanceof joseErrors.JWTExpired) {
        throw fail(
          "expired",
          `The token expired at ${new Date(Number(error.payload.exp) * 1000).toISOString()}.`,
        );
      }
      if (error instanceof joseErrors.JWTClaimValidationFailed && error.claim === "aud") {
        throw fail("wrong_audience", `The token was issued for another audience than "${this.audience}".`);
      }
      if (error instanceof joseErrors.JWSSignatureVerificationFailed) {
        throw fail(
          "bad_signature",
          "The token's signature does not verify: it was altered or signed elsewhere.",
        );
      }
      throw fail("malformed", "The token is not a valid Testbay access token.");
    }
  }
}

function isRole(value: unknown): value is ClientRole {
  return value === "ci" || value === "agent" || value === "admin";
}
