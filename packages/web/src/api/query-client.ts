import { QueryCache, QueryClient } from "@tanstack/react-query";
import { ApiProblem } from "./problem.ts";
import { sessionKey } from "./session-key.ts";

/**
 * One cache for the whole dashboard. A refusal the caller can fix (4xx) is not retried: asking again gets the
 * same answer. A 401 means the session is gone: the session is read again, and the layout sends the person to
 * the sign-in page.
 */
export const queryClient: QueryClient = new QueryClient({
  queryCache: new QueryCache({
    onError(error) {
      if (error instanceof ApiProblem && error.signedOut) {
        void queryClient.invalidateQueries({ queryKey: sessionKey });
      }
    },
  }),
  defaultOptions: {
    queries: {
      staleTime: 5_000,
      retry: (failures, error) =>
        !(error instanceof ApiProblem && error.status >= 400 && error.status < 500) && failures < 2,
    },
  },
});
