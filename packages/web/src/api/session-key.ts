/** The query key of GET /auth/session, shared by the session's queries and the cache's 401 handling. */
export const sessionKey = ["session"] as const;
