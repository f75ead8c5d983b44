import fastifyCookie from "@fastify/cookie";
import type { FastifyInstance, FastifyRequest } from "fastify";

/**
 * Registers @fastify/cookie for its codec only (parseCookie, serializeCookie), on the root instance so that
 * every route's context has it. No hook parses the cookies of every request: machines' requests never pay
 * for it, and the session cookie is read where it is needed.
 */
export async function registerCookieCodec(app: FastifyInstance): Promise<void> {
  await app.register(fastifyCookie, { hook: false });
}

export const sessionCookieName = "testbay_session";

/** A session ID is 43 URL-safe characters (session-ids.ts); anything else is no session of ours. */
const sessionIdPattern = /^[A-Za-z0-9_-]{43}$/;

/** The session ID in the request's cookie header, if it holds one that could be ours. */
export function sessionIdFromCookies(request: FastifyRequest): string | undefined {
  const header = request.headers.cookie;
  if (header === undefined || !header.includes(sessionCookieName)) return undefined;
  const value = request.server.parseCookie(header)[sessionCookieName];
  return value !== undefined && sessionIdPattern.test(value) ? value : undefined;
}

/**
 * Set-Cookie for a new session (`server` has @fastify/cookie registered, which loads the cookie codec). HttpOnly: the dashboard's scripts never need the ID (they use the CSRF
 * token), so a script injected into the page cannot steal it. SameSite=Lax: other sites' subresource and
 * form posts come without it. No Max-Age: the browser forgets it when it closes, and the server ends it after
 * 12 h idle whatever the browser keeps. `Secure` whenever the server is reached over HTTPS.
 */
export function sessionCookie(server: FastifyInstance, sessionId: string, secure: boolean): string {
  return server.serializeCookie(sessionCookieName, sessionId, {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure,
  });
}

/** Set-Cookie that makes the browser drop the session cookie. */
export function clearedSessionCookie(server: FastifyInstance, secure: boolean): string {
  return server.serializeCookie(sessionCookieName, "", {
    httpOnly: true,
    sameSite: "lax",
    path: "/",
    secure,
    maxAge: 0,
    expires: new Date(0),
  });
}
