import type { ClientRecord } from "../clients/index.ts";
import { invalidToken, type VerifiedToken } from "./tokens.ts";

/**
 * The client a verified token names, if that token still stands: the client exists in the token's organization,
 * is enabled, and has not rotated its secret or been re-enabled since the token was issued. Throws the
 * `invalid_access_token` refusal otherwise. Every way in by token (the /v1 hook, authenticate.ts; a WebDriver new
 * session, features/sessions/webdriver-authentication.ts) asks this.
 */
export function clientOfToken(
  verified: VerifiedToken,
  client: ClientRecord | undefined,
  audience: string,
): ClientRecord {
  if (!client || client.organizationId !== verified.organizationId || client.disabledAt) {
    throw invalidToken("client_disabled", "The client this token was issued to is disabled.", audience);
  }
  if (client.tokensNotBefore !== null && verified.issuedAt < Date.parse(client.tokensNotBefore)) {
    throw invalidToken(
      "token_revoked",
      "The token was issued before the client's secret was rotated or the client was re-enabled.",
      audience,
    );
  }
  return client;
}
