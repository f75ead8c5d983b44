import { createCipheriv, createDecipheriv, hkdfSync, type KeyObject, randomBytes } from "node:crypto";

/**
 * What a sign-in through the provider must remember between leaving for the provider and coming back: the
 * values openid-client checks the answer against, and where the person was going.
 */
export interface OidcPending {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** A same-site path (safeNextPath). */
  next: string;
  /** Milliseconds since the epoch; a pending sign-in older than oidcPendingMs is refused. */
  startedAt: number;
}

/** Long enough to type a password and pass a second factor at the provider; short enough not to linger. */
export const oidcPendingMs = 10 * 60 * 1000;

export const oidcStateCookieName = "testbay_oidc";

/**
 * Seals and opens the pending sign-in kept in the browser's cookie (AES-256-GCM). The key is derived from
 * the server's signing key, which every instance on one database has (loaded from it or configured alike):
 * the instance that sends the person to the provider need not be the one they come back to, and no table
 * has to hold sign-ins that are never finished. Encrypted, not only signed: the PKCE verifier is a secret
 * until the code is redeemed, and the cookie should not show it to whatever reads the browser's cookies.
 */
export class OidcStateSealer {
  private readonly key: Buffer;

  constructor(signingKey: KeyObject) {
    const secret = signingKey.export({ type: "pkcs8", format: "der" });
    // A label of its own: this key is good for these cookies and nothing else the signing key is used for.
    this.key = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), "testbay-oidc-state-cookie", 32));
  }

  seal(pending: OidcPending): string {
    const iv = randomBytes(12);
    const cipher = createCipheriv("aes-256-gcm", this.key, iv);
    const body = Buffer.concat([cipher.update(JSON.stringify(pending), "utf8"), cipher.final()]);
    return Buffer.concat([iv, cipher.getAuthTag(), body]).toString("base64url");
  }

  /** The pending sign-in, or undefined when the cookie is not one this deployment sealed, or is malformed. */
  open(sealed: string): OidcPending | undefined {
    const raw = Buffer.from(sealed, "base64url");
    if (raw.length < 12 + 16 + 2) return undefined;
    try {
      const decipher = createDecipheriv("aes-256-gcm", this.key, raw.subarray(0, 12));
      decipher.setAuthTag(raw.subarray(12, 28));
      const text = Buffer.concat([decipher.update(raw.subarray(28)), decipher.final()]).toString("utf8");
      const value = JSON.parse(text) as Partial<OidcPending>;
      const strings = [value.state, value.nonce, value.codeVerifier, value.next];
      if (strings.some((s) => typeof s !== "string") || typeof value.startedAt !== "number") return undefined;
      return value as OidcPending;
    } catch {
      return undefined;
    }
  }
}

/**
 * Where to go after signing in: a path on this site, or `/runs`. `//host` and `/\host` are refused because
 * browsers read both as another host; anything not starting with one `/` (a full URL, `javascript:`) too.
 */
export function safeNextPath(next: string | undefined): string {
  const fallback = "/runs";
  if (next === undefined || next.length > 2048) return fallback;
  if (!next.startsWith("/") || next.startsWith("//") || next.startsWith("/\\")) return fallback;
  // Control characters (URL parsers drop a tab or newline, so "/\t/host" becomes "//host"), and backslashes
  // anywhere: browsers read them as slashes.
  for (const char of next) {
    const code = char.charCodeAt(0);
    if (code < 0x20 || code === 0x7f || char === "\\") return fallback;
  }
  return next;
}
