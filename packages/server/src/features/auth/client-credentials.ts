import { ApiError } from "../../errors.ts";

/** How a token request authenticated its client (RFC 6749 §2.3.1; the names are RFC 8414's). */
export type ClientAuthMethod = "client_secret_basic" | "client_secret_post";

export interface ClientCredentials {
  method: ClientAuthMethod;
  clientId: string;
  clientSecret: string;
}

/** The fields of a token request body that carry client credentials (JSON or form). */
export interface CredentialFields {
  client_id?: string | undefined;
  client_secret?: string | undefined;
}

/** Sent with every 401 of a request that used HTTP Basic, as RFC 6749 §5.2 requires. */
/**
 * The count a failed client-credential check is charged to (API.md §1): the client ID it names *and* the caller's
 * address, apart from the client's own bucket. Charged to the client's bucket, a flood of wrong secrets from anyone
 * who knows the ID (audit entries, CI logs show it) emptied the bucket the real client's pipeline runs on. Shared by the token endpoint (auth.routes.ts) and
 * HTTP Basic at a WebDriver new session (features/sessions/webdriver-authentication.ts): guessing a secret costs
 * the same in both places.
 */
export const failedCredentialsKey = (clientId: string, address: string) =>
  `token-failures:${clientId}:${address}`;

export const basicChallenge = 'Basic realm="testbay", charset="UTF-8"';

/** The body schema's bounds, applied to what arrives in the Authorization header too. */
const maxClientIdLength = 128;
const maxClientSecretLength = 512;

const basicFix =
  "Send Authorization: Basic base64(client_id:client_secret), each part URL-encoded first (curl -u ID:SECRET does this for Testbay's IDs and secrets), or send client_id and client_secret in the body instead.";

function malformedBasic(detail: string): ApiError {
  return new ApiError("invalid_request", {
    detail,
    fix: basicFix,
    extra: { errors: [{ path: "authorization", in: "headers", message: "is not valid Basic credentials" }] },
  });
}

/**
 * RFC 6749 §2.3.1 has the client URL-encode its ID and secret before Basic-encoding them
 * (application/x-www-form-urlencoded, so "+" is a space). Our IDs and secrets need no encoding, so clients
 * that skip it (curl -u) are understood too.
 */
function formDecode(part: string): string {
  try {
    return decodeURIComponent(part.replace(/\+/g, " "));
  } catch {
    throw malformedBasic("The Basic credentials hold a malformed percent-encoding.");
  }
}

/**
 * Reads `Authorization: Basic …`; undefined when the header is absent or in another scheme. A Basic header
 * that does not decode to `id:secret` is refused as invalid_request.
 */
export function parseBasicAuthorization(
  header: string | undefined,
): { clientId: string; clientSecret: string } | undefined {
  if (header === undefined) return undefined;
  const match = /^basic +([A-Za-z0-9+/]+={0,2}) *$/i.exec(header);
  if (!match) {
    if (/^basic\b/i.test(header))
      throw malformedBasic("The Authorization header is not valid Basic credentials.");
    return undefined;
  }
  const decoded = Buffer.from(match[1] ?? "", "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  if (colon < 0) throw malformedBasic("The Basic credentials have no ':' between client ID and secret.");
  const clientId = formDecode(decoded.slice(0, colon));
  const clientSecret = formDecode(decoded.slice(colon + 1));
  if (clientId === "" || clientSecret === "") {
    throw malformedBasic("The Basic credentials have an empty client ID or secret.");
  }
  // The decoded text reaches database queries: hold it to the body's rules (lengths, no NUL, no U+FFFD from
  // bytes that were not UTF-8) so that no client ID can make PostgreSQL fail.
  if (
    clientId.length > maxClientIdLength ||
    clientSecret.length > maxClientSecretLength ||
    `${clientId}${clientSecret}`.includes("\u0000") ||
    `${clientId}${clientSecret}`.includes("\ufffd")
  ) {
    throw malformedBasic("The Basic credentials hold a client ID or secret that no client can have.");
  }
  return { clientId, clientSecret };
}

/**
 * The client a token request names, for rate limiting: read before the body is validated, so it never
 * throws (a malformed request is charged to the caller's address instead).
 */
export function namedClientId(header: string | undefined, body: unknown): string | undefined {
  try {
    const basic = parseBasicAuthorization(header);
    if (basic) return basic.clientId;
  } catch {
    return undefined;
  }
  const id = (body as { client_id?: unknown } | undefined)?.client_id;
  return typeof id === "string" && id.length > 0 && id.length <= maxClientIdLength ? id : undefined;
}

/**
 * The client credentials of a token request, by exactly one method: HTTP Basic, or `client_id` and
 * `client_secret` in the body. Both at once, or a body `client_id` that differs from the Basic one, is
 * invalid_request (RFC 6749 §2.3: a client uses one authentication method per request). Another
 * Authorization scheme is invalid_client (RFC 6749 §5.2: "unsupported authentication method").
 */
export function clientCredentials(header: string | undefined, body: CredentialFields): ClientCredentials {
  if (header !== undefined && !/^basic\b/i.test(header)) {
    throw new ApiError("invalid_access_token", {
      reason: "invalid_client",
      detail: "The Authorization header uses a scheme the token endpoint does not take (only Basic).",
      fix: "Authenticate the client with Authorization: Basic base64(client_id:client_secret), or with client_id and client_secret in the body; tokens go in x-api-key on the other endpoints, never here.",
      headers: { "www-authenticate": basicChallenge },
    });
  }
  const basic = parseBasicAuthorization(header);
  if (basic) {
    if (body.client_secret !== undefined) {
      throw new ApiError("invalid_request", {
        detail: "The request authenticates the client twice: HTTP Basic and client_secret in the body.",
        fix: "Use one method: either the Authorization: Basic header, or client_id and client_secret in the body.",
        extra: {
          errors: [{ path: "/client_secret", in: "body", message: "must be absent with HTTP Basic" }],
        },
      });
    }
    if (body.client_id !== undefined && body.client_id !== basic.clientId) {
      throw new ApiError("invalid_request", {
        detail: "The client_id in the body is not the client ID of the Basic credentials.",
        fix: "Leave client_id out of the body when using HTTP Basic, or send the same ID in both.",
        extra: { errors: [{ path: "/client_id", in: "body", message: "differs from the Basic client ID" }] },
      });
    }
    return { method: "client_secret_basic", ...basic };
  }
  const missing = (["client_id", "client_secret"] as const).filter((field) => body[field] === undefined);
  if (missing.length > 0 || body.client_id === undefined || body.client_secret === undefined) {
    throw new ApiError("invalid_request", {
      detail: `The request has no client credentials: ${missing.join(" and ")} missing.`,
      fix: "Send client_id and client_secret in the body, or authenticate with Authorization: Basic base64(client_id:client_secret).",
      extra: { errors: missing.map((field) => ({ path: `/${field}`, in: "body", message: "is required" })) },
    });
  }
  return { method: "client_secret_post", clientId: body.client_id, clientSecret: body.client_secret };
}
