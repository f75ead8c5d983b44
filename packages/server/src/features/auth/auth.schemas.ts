import { Type } from "typebox";
import { Problem } from "../../http/problem.schema.ts";

/**
 * Client-credentials token request, Auth0-compatible, as JSON or a form. Unknown parameters are ignored, as
 * OAuth 2.0 asks (RFC 6749 §3.1); the token endpoint checks `grant_type` itself so it can answer in OAuth's
 * terms. `client_id` and `client_secret` are optional here because a client may send them by HTTP Basic
 * instead (client_secret_basic); the endpoint requires one method or the other.
 */
export const TokenRequest = Type.Object(
  {
    grant_type: Type.Optional(
      Type.String({ maxLength: 100, description: "Only `client_credentials` (the default)." }),
    ),
    client_id: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 128,
        description: "Required unless the client authenticates by HTTP Basic; then absent or the same ID.",
      }),
    ),
    client_secret: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 512,
        description: "Required unless the client authenticates by HTTP Basic; then it must be absent.",
      }),
    ),
    audience: Type.String({
      minLength: 1,
      maxLength: 512,
      description: "Must equal the server's TESTBAY_AUDIENCE.",
    }),
  },
  { additionalProperties: true },
);

export const TokenResponse = Type.Object({
  access_token: Type.String({ description: "Send it as the x-api-key header." }),
  token_type: Type.Literal("api-key"),
  expires_in: Type.Integer({ description: "Seconds until the token expires (86400)." }),
  expires_at: Type.String({ format: "date-time" }),
});

/**
 * The token endpoint's error body: the problem members plus OAuth's (RFC 6749 §5.2), served as
 * `application/json` because OAuth clients read nothing else.
 */
export const OAuthProblem = Type.Object(
  {
    ...Problem.properties,
    error: Type.String({
      description:
        "OAuth error code: invalid_request, invalid_client, unsupported_grant_type, temporarily_unavailable or server_error.",
    }),
    error_description: Type.String(),
  },
  { additionalProperties: true, title: "OAuthProblem" },
);

/** The token endpoint's error responses (its other routes use ProblemResponses). */
export const OAuthProblemResponses = {
  "4xx": {
    description: "Refused; `error` says why in OAuth's terms, `code`, `reason` and `fix` in Testbay's.",
    content: { "application/json": { schema: OAuthProblem } },
  },
  "5xx": {
    description: "A server failure; `request_id` identifies it in the server's logs.",
    content: { "application/json": { schema: OAuthProblem } },
  },
};
