import { queryOptions } from "@tanstack/react-query";
import { api } from "./client.ts";
import { rememberCsrfToken } from "./csrf.ts";
import { unwrap } from "./problem.ts";
import { queryClient } from "./query-client.ts";
import { sessionKey } from "./session-key.ts";
import type { SessionState } from "./types.ts";

function remember(state: SessionState): SessionState {
  rememberCsrfToken(state.signed_in ? state.csrf_token : undefined);
  return state;
}

/** Who is signed in, with the CSRF token their changes carry (GET /auth/session). */
export const sessionQuery = queryOptions({
  queryKey: sessionKey,
  queryFn: async () => remember(unwrap(await api.GET("/auth/session"))),
  staleTime: 60_000,
});

/**
 * POST /auth/login; a refusal (wrong password, too many attempts, which organization?) is thrown as an
 * ApiProblem for the form. `org` names the organization when the email has accounts in several.
 */
export async function signIn(email: string, password: string, org?: string): Promise<void> {
  const body = unwrap(
    await api.POST("/auth/login", {
      body: org === undefined ? { email, password } : { email, password, org },
    }),
  );
  queryClient.setQueryData(sessionKey, remember({ signed_in: true, ...body }));
}

/** POST /auth/logout; the caller leaves the signed-in pages, then calls forgetPersonData. */
export async function signOut(): Promise<void> {
  const { response } = await api.POST("/auth/logout");
  if (!response.ok && response.status !== 401) throw new Error(`Signing out failed: ${response.status}`);
  queryClient.setQueryData(sessionKey, remember({ signed_in: false }));
}

/**
 * Nothing of the person's data stays in the cache once they signed out. Called after their pages are gone:
 * a page still open would fetch its data again, and be refused.
 */
export function forgetPersonData(): void {
  queryClient.removeQueries({ predicate: (query) => query.queryKey[0] !== sessionKey[0] });
}
