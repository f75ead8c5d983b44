import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/**
 * A new session ID: 256 random bits, URL-safe. It exists only in the person's cookie; the database keeps its
 * hash (sessionIdHash), so a copy of the sessions table signs nobody in.
 */
export function newSessionId(): string {
  return randomBytes(32).toString("base64url");
}

/** What the sessions table is keyed by. A plain hash suffices: the ID is random, not a guessable password. */
export function sessionIdHash(sessionId: string): string {
  return createHash("sha256").update(`testbay-session\0${sessionId}`).digest("hex");
}

/**
 * The session's CSRF token, derived from its ID rather than stored: every instance computes the same token
 * for the same cookie without a read, and it ends with the session. It is a hash with another label than
 * the table's key, so neither the token (which the dashboard's scripts hold) nor a copy of the table gives
 * back the ID, and one cannot be computed from the other.
 */
export function csrfTokenFor(sessionId: string): string {
  return createHash("sha256").update(`testbay-csrf\0${sessionId}`).digest("base64url");
}

/** Compares a presented token with the expected one in constant time (no early exit on the first mismatch). */
export function sameToken(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
