export { createAuth } from "./auth.feature.ts";
export { type AuthRoutesOptions, authRoutes } from "./auth.routes.ts";
export { registerAuthentication, type SessionAuthentication } from "./authenticate.ts";
export { basicChallenge, failedCredentialsKey, parseBasicAuthorization } from "./client-credentials.ts";
export { loadSigningKey, type SigningKey } from "./signing-key.ts";
export { clientOfToken } from "./token-client.ts";
export { invalidToken, TokenService, tokenIssuer, tokenLifetimeSeconds } from "./tokens.ts";
