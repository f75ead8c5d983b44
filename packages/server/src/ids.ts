import { randomBytes } from "node:crypto";

const crockford = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/**
 * `prefix_` + 26 Crockford base32 characters: 48 bits of milliseconds (so IDs sort by creation time, which
 * keeps index inserts local) followed by 80 random bits (so the next ID cannot be guessed from the last).
 */
export function newId(prefix: "org" | "cl" | "tp" | "ex" | "req" | "key", now = Date.now()): string {
  const bytes = Buffer.alloc(16);
  bytes.writeUIntBE(now, 0, 6);
  randomBytes(10).copy(bytes, 6);
  let bits = 0n;
  for (const byte of bytes) bits = (bits << 8n) | BigInt(byte);
  let out = "";
  for (let i = 0; i < 26; i++) {
    out = crockford[Number(bits & 31n)] + out;
    bits >>= 5n;
  }
  return `${prefix}_${out}`;
}
