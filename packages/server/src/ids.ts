import { randomFillSync } from "node:crypto";

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * `prefix_` + 26 Crockford base32 characters: 48 bits of milliseconds (so IDs sort by creation time, which
 * keeps index inserts local) followed by 80 random bits (so the next ID cannot be guessed from the last).
 * Made on every request (request IDs), so it avoids BigInt and allocates little.
 */
export function newId(
  prefix:
    | "org"
    | "cl"
    | "app"
    | "ver"
    | "tp"
    | "ex"
    | "dr"
    | "req"
    | "key"
    | "blob"
    | "ls"
    | "art"
    | "usr"
    | "aud"
    | "tb"
    | "evt"
    | "wh"
    | "msg"
    | "wha"
    | "sch",
  now = Date.now(),
): string {
  const bytes = Buffer.allocUnsafe(16);
  bytes.writeUIntBE(now, 0, 6);
  randomFillSync(bytes, 6, 10);
  // 128 bits as 26 five-bit digits, most significant first; the first digit carries two zero bits on top.
  let out = "";
  let buffer = 0;
  let pending = 2;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0x1fff;
    pending += 8;
    while (pending >= 5) {
      pending -= 5;
      out += crockford[(buffer >> pending) & 31];
    }
  }
  return `${prefix}_${out}`;
}

/** The creation time encoded in an ID made by newId; +Infinity for anything else (so it never looks old). */
export function timeOfId(id: string): number {
  const encoded = id.slice(id.lastIndexOf("_") + 1);
  if (encoded.length !== 26) return Number.POSITIVE_INFINITY;
  let ms = 0;
  // The first 10 characters hold 50 bits: two zero bits, then the 48 bits of milliseconds.
  for (const char of encoded.slice(0, 10)) {
    const digit = crockford.indexOf(char);
    if (digit < 0) return Number.POSITIVE_INFINITY;
    ms = ms * 32 + digit;
  }
  return ms;
}
