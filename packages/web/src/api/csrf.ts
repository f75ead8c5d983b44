// The CSRF token of the current session, kept where the API client can read it without importing the session's
// queries (which import the client). Set on sign-in and on every read of GET /auth/session.
let token: string | undefined;

export function rememberCsrfToken(value: string | undefined): void {
  token = value;
}

export function currentCsrfToken(): string | undefined {
  return token;
}
