import { randomBytes, type ScryptOptions, scrypt, timingSafeEqual } from "node:crypto";

// scrypt with N=2^15, r=8, p=1: about 32 MiB and tens of milliseconds per hash, so a leaked table of hashes
// is slow to attack, while a pipeline pays the cost once per run (it asks for one token per run).
const params = { N: 2 ** 15, r: 8, p: 1 } as const;
const keyLength = 32;

function derive(secret: string, salt: Buffer, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const maxmem = 128 * (options.N ?? params.N) * (options.r ?? params.r) * 2;
    scrypt(secret, salt, keyLength, { ...options, maxmem }, (error, key) =>
      error ? reject(error) : resolve(key),
    );
  });
}

/** `scrypt$N$r$p$salt$hash`, salt and hash in base64: the parameters travel with the hash. */
export async function hashSecret(secret: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await derive(secret, salt, params);
  return ["scrypt", params.N, params.r, params.p, salt.toString("base64"), hash.toString("base64")].join("$");
}

export async function verifySecret(secret: string, stored: string): Promise<boolean> {
  const [scheme, n, r, p, salt, hash] = stored.split("$");
  if (scheme !== "scrypt" || !salt || !hash) return false;
  const expected = Buffer.from(hash, "base64");
  const actual = await derive(secret, Buffer.from(salt, "base64"), {
    N: Number(n),
    r: Number(r),
    p: Number(p),
  });
  return actual.length === expected.length && timingSafeEqual(actual, expected);
}

let decoy: Promise<string> | undefined;

/**
 * Spends the same time as a real check for an unknown client ID, so response times do not tell which
 * client IDs exist.
 */
export async function verifyAgainstDecoy(secret: string): Promise<false> {
  decoy ??= hashSecret(randomBytes(24).toString("base64url"));
  await verifySecret(secret, await decoy);
  return false;
}
