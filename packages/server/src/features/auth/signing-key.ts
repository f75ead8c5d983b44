import { createPrivateKey, createPublicKey, generateKeyPairSync, type KeyObject } from "node:crypto";
import { calculateJwkThumbprint, exportJWK } from "jose";
import type { Kysely } from "kysely";
import type { Clock } from "../../clock.ts";
import { isoTime } from "../../clock.ts";
import type { Database } from "../../db/schema.ts";

export interface SigningKey {
  /** JWK thumbprint of the public key: tokens name the key that signed them. */
  kid: string;
  privateKey: KeyObject;
  publicKey: KeyObject;
}

/**
 * The Ed25519 key that signs access tokens: the configured one (TESTBAY_SIGNING_KEY), or else one generated
 * on first start and kept in the database, so every instance on one database signs and verifies alike.
 */
export async function loadSigningKey(
  db: Kysely<Database>,
  configuredPem: string | undefined,
  clock: Clock,
): Promise<SigningKey> {
  const pem = configuredPem ?? (await storedKeyPem(db, clock));
  const privateKey = createPrivateKey(pem);
  const publicKey = createPublicKey(privateKey);
  const kid = await calculateJwkThumbprint(await exportJWK(publicKey));
  return { kid, privateKey, publicKey };
}

async function storedKeyPem(db: Kysely<Database>, clock: Clock): Promise<string> {
  const generated = generateKeyPairSync("ed25519")
    .privateKey.export({ type: "pkcs8", format: "pem" })
    .toString();
  // Two instances starting at once on an empty database both try; the first insert wins and both read it.
  await db
    .insertInto("signing_keys")
    .values({
      id: "default",
      algorithm: "EdDSA",
      private_key_pem: generated,
      created_at: isoTime(clock.now()),
    })
    .onConflict((oc) => oc.column("id").doNothing())
    .execute();
  const row = await db
    .selectFrom("signing_keys")
    .select("private_key_pem")
    .where("id", "=", "default")
    .executeTakeFirstOrThrow();
  return row.private_key_pem;
}
