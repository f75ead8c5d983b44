import { createCipheriv, createDecipheriv, hkdfSync, type KeyObject, randomBytes } from "node:crypto";

/**
 * Seals the webhooks' signing secrets for the database (AES-256-GCM). A secret must be readable to sign with,
 * so it cannot be hashed like client secrets; sealed, a copy of the database (a backup, a dump) does not
 * reveal it. The key is derived from the server's signing key, which every instance on one database has
 * (loaded from it or configured alike), under a label of its own so it is good for nothing else.
 */
export class SecretBox {
  private readonly key: Buffer;

  constructor(signingKey: KeyObject) {
    const secret = signingKey.export({ type: "pkcs8", format: "der" });
    this.key = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), "testbay-webhook-secrets", 32));
  }

  seal(plain: string): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(plain, "utf8"), cipher.final()]);
    return `v1.${Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url")}`;
  }

  /** Throws when the text was not sealed with this key (another signing key, or tampered with). */
  open(sealed: string): string {
    const raw = Buffer.from(sealed.replace(/^v1\./, ""), "base64url");
    const decipher = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
    decipher.setAuthTag(raw.subarray(12, 28));
    return Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
  }
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64, as receivers' libraries expect. */
export function newWebhookSecret(): string {
  return `whsec_${randomBytes(32).toString("base64")}`;
}
