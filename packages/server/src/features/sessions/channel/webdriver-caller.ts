import type { FastifyRequest } from "fastify";

/**
 * Who a WebDriver command says it comes from, when it says so at all (API.md §12: clients send credentials with
 * the new session only, and the session ID addresses the session). Read, not verified: it is only ever used to
 * refuse a command that names another client than the session's, never to admit one, so a forged value gains
 * nothing that the session ID alone would not give.
 */
export interface WebDriverCaller {
  /** The client ID of the `x-api-key` token's subject, or of HTTP Basic's user name. */
  clientId?: string;
}

export function webDriverCallerOf(request: FastifyRequest): WebDriverCaller {
  const apiKey = request.headers["x-api-key"];
  if (typeof apiKey === "string" && apiKey !== "") {
    const subject = tokenSubject(apiKey);
    return subject === undefined ? {} : { clientId: subject };
  }
  const authorization = request.headers.authorization;
  const basic = typeof authorization === "string" ? /^basic\s+(\S+)$/i.exec(authorization) : null;
  if (basic?.[1]) {
    const decoded = Buffer.from(basic[1], "base64").toString("utf8");
    const user = decoded.slice(0, Math.max(0, decoded.indexOf(":")));
    // client_secret_basic URL-encodes the ID (RFC 6749 §2.3.1); WebDriver clients send it as it is.
    if (user !== "") return { clientId: safeDecode(user) };
  }
  return {};
}

/** The `sub` claim of a JWT's payload, unverified (see WebDriverCaller). */
function tokenSubject(token: string): string | undefined {
  const payload = token.split(".")[1];
  if (!payload) return undefined;
  try {
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { sub?: unknown };
    return typeof claims.sub === "string" ? claims.sub : undefined;
  } catch {
    return undefined;
  }
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}
