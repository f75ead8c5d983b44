import type { components } from "./api.generated.ts";
import { type Clock, untilAborted } from "./clock.ts";

/** The token endpoint's answer (API.md §1). */
export type TokenResponse = components["schemas"]["TokenResponse"];

/** Refresh this long before the token expires, so no call goes out with a token about to lapse in flight. */
export const defaultRefreshMarginMs = 5 * 60_000;

/**
 * One token per pipeline run (CLIENT.md rule 1): requested once, on first use, and reused for every call
 * until shortly before it expires. A token given up front (TESTBAY_TOKEN) is used as it is and no token call
 * is ever made. Calls that need a token at the same moment share one request for it.
 */
export class TokenCache {
  private token: string | undefined;
  private expiresAt = Infinity;
  private pending: Promise<string> | undefined;
  private readonly refreshMarginMs: number;
  /** A token given up front: never refreshed, never replaced. */
  readonly fixed: boolean;
  /** Token calls made so far: tests check that it stays at one. */
  requests = 0;

  constructor(
    private readonly clock: Clock,
    private readonly fetchToken: (() => Promise<TokenResponse>) | undefined,
    options: { token?: string | undefined; refreshMarginMs?: number } = {},
  ) {
    this.token = options.token || undefined;
    this.fixed = this.token !== undefined;
    this.refreshMarginMs = options.refreshMarginMs ?? defaultRefreshMarginMs;
  }

  /**
   * The current token, requesting one first when there is none or it is about to expire. When `signal`
   * fires, this caller stops waiting (rejecting with the signal's reason) but the request goes on: other
   * callers share it, and the token it brings is kept for the next call.
   */
  async get(signal?: AbortSignal): Promise<string> {
    if (
      this.token !== undefined &&
      (this.fixed || this.clock.now() < this.expiresAt - this.refreshMarginMs)
    ) {
      return this.token;
    }
    if (!this.fetchToken) {
      throw new Error(
        "No access token: set TESTBAY_TOKEN, or TESTBAY_CLIENT_ID and TESTBAY_CLIENT_SECRET to request one.",
      );
    }
    // A caller that has already given up starts no request.
    signal?.throwIfAborted();
    this.pending ??= this.refresh(this.fetchToken).finally(() => {
      this.pending = undefined;
    });
    return untilAborted(this.pending, signal);
  }

  /**
   * The server refused `token` as revoked or unknown (401 `invalid_access_token`: the client's secret was
   * rotated, or it was disabled and enabled again): the next call asks for a new one instead of sending it
   * until it expires. The refused call itself is not retried (CLIENT.md rule 2). A token given up front is
   * kept: there is nothing else to use.
   */
  discard(token: string): void {
    if (this.fixed || this.token !== token) return;
    this.token = undefined;
    this.expiresAt = Infinity;
  }

  /** The last token obtained, with its expiry, without requesting one. */
  peek(): { token: string; expiresAt: number } | undefined {
    return this.token === undefined ? undefined : { token: this.token, expiresAt: this.expiresAt };
  }

  private async refresh(fetchToken: () => Promise<TokenResponse>): Promise<string> {
    const requestedAt = this.clock.now();
    this.requests += 1;
    const response = await fetchToken();
    const stated = Date.parse(response.expires_at);
    // Trust expires_in over expires_at: it does not depend on the two clocks agreeing.
    this.expiresAt = Number.isFinite(response.expires_in)
      ? requestedAt + response.expires_in * 1000
      : Number.isNaN(stated)
        ? requestedAt
        : stated;
    this.token = response.access_token;
    return this.token;
  }
}
