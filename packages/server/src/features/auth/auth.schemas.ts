import { Type } from "typebox";

/**
 * Client-credentials token request, Auth0-compatible. Unknown parameters are ignored, as OAuth 2.0 asks
 * (RFC 6749 §3.1); the token endpoint checks `grant_type` itself so it can answer in OAuth's terms.
 */
export const TokenRequest = Type.Object(
  {
    grant_type: Type.Optional(
      Type.String({ maxLength: 100, description: "Only `client_credentials` (the default)." }),
    ),
    client_id: Type.String({ minLength: 1, maxLength: 128 }),
    client_secret: Type.String({ minLength: 1, maxLength: 512 }),
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
