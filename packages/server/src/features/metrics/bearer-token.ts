import { createHash, timingSafeEqual } from "node:crypto";

/**
 * Whether an `Authorization` header carries `Bearer <expected>`, compared in constant time: both sides are
 * hashed first, so neither the token's characters nor its length show in how long a wrong guess takes.
 * The scheme is case-insensitive (RFC 9110 §11.1), as Prometheus's `authorization` scrape option sends it.
 */
export function bearerMatches(header: string | undefined, expected: string): boolean {
  const match = header === undefined ? null : /^bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
  const given = match?.[1] ?? "";
  const equal = timingSafeEqual(digest(given), digest(expected));
  return match !== null && equal;
}

const digest = (text: string) => createHash("sha256").update(text, "utf8").digest();
