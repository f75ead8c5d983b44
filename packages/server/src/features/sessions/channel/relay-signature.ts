import { createHmac, hkdfSync, type KeyObject, timingSafeEqual } from "node:crypto";

/** The header a forwarded command carries: `t=<ms since the epoch>,v1=<hex HMAC-SHA256>`. */
export const relaySignatureHeader = "x-testbay-relay-signature";

/** How far a signature's time may be from the receiver's: instances' clocks agree (NTP), a replay later fails. */
const toleranceMs = 60_000;

/**
 * Signs and checks the commands one instance forwards to the instance holding an agent's channel
 * (docs/appium-relay.md, "Several instances"). The key is derived from the server's signing key
 * (TESTBAY_SIGNING_KEY, or the one kept in the database), which every instance of one deployment has, under a
 * label of its own, as webhooks/secret-box.ts does: it is good for nothing else, and nobody outside the
 * deployment can make a request that an instance relays to an agent.
 */
export class RelaySignature {
  private readonly key: Buffer;

  constructor(
    signingKey: KeyObject,
    private readonly now: () => number,
  ) {
    const secret = signingKey.export({ type: "pkcs8", format: "der" });
    this.key = Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), "testbay-instance-relay", 32));
  }

  /** The header value for `body`, the exact bytes sent. */
  sign(body: string): string {
    const at = this.now();
    return `t=${at},v1=${this.mac(at, body)}`;
  }

  /** Whether `header` signs `body` with this deployment's key, within the tolerance of now. */
  verify(header: string | undefined, body: string): boolean {
    const match = /^t=(\d{1,16}),v1=([0-9a-f]{64})$/.exec(header ?? "");
    if (!match?.[1] || !match[2]) return false;
    const at = Number(match[1]);
    if (Math.abs(this.now() - at) > toleranceMs) return false;
    const expected = Buffer.from(this.mac(at, body), "hex");
    // Constant time: a timing difference must not tell how much of a guessed MAC was right.
    return timingSafeEqual(expected, Buffer.from(match[2], "hex"));
  }

  private mac(at: number, body: string): string {
    return createHmac("sha256", this.key).update(`${at}.`).update(body).digest("hex");
  }
}
