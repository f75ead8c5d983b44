import { sameToken } from "./session-ids.ts";

export interface CsrfCheckInput {
  /** The `x-csrf-token` header, if any. */
  presentedToken: string | undefined;
  /** The session's own token (csrfTokenFor). */
  expectedToken: string;
  /** The `Origin` header, if any. */
  origin: string | undefined;
  /** Origins the dashboard is served from: the request's own and TESTBAY_PUBLIC_URL's. */
  sameOrigins: readonly string[];
}

/**
 * Why a cookie-authenticated change must be refused as cross-site, or undefined when it may go on.
 *
 * Two checks, both required (API.md §10). The token: a page on another site can make the browser send the
 * cookie, but cannot read our responses (same-origin policy), so it cannot know the session's token, nor set
 * a custom header on a form post without a CORS preflight we never grant. The Origin, when the browser sends
 * one: a second line should the token ever leak into another origin's reach.
 *
 * Why not @fastify/csrf-protection: it keeps its own secret in a session or cookie and mints tokens from it,
 * and it does not look at Origin. Our token is already a secret bound to the session (derived from its ID,
 * see session-ids.ts) that every instance can recompute, so checking it is one constant-time comparison;
 * the plugin would add a second secret to store and share across instances for the same guarantee.
 */
export function csrfRefusal(input: CsrfCheckInput): string | undefined {
  if (input.presentedToken === undefined || input.presentedToken === "") {
    return "The request is authenticated by a session cookie and changes state, but carries no x-csrf-token header.";
  }
  if (!sameToken(input.presentedToken, input.expectedToken)) {
    return "The x-csrf-token header does not match this session's token.";
  }
  if (input.origin !== undefined && !input.sameOrigins.includes(input.origin.toLowerCase())) {
    return `The request comes from another origin (${input.origin.slice(0, 200)}) than the dashboard's.`;
  }
  return undefined;
}

/** `scheme://host[:port]` in lower case, as browsers send it in Origin; undefined for what is no URL. */
export function originOf(url: string): string | undefined {
  try {
    const origin = new URL(url).origin;
    return origin === "null" ? undefined : origin.toLowerCase();
  } catch {
    return undefined;
  }
}
