import { describe, expect, it } from "vitest";
import { FakeClock } from "./clock.ts";
import { TokenCache, type TokenResponse } from "./token-cache.ts";

function issuer(clock: FakeClock) {
  let issued = 0;
  const fetchToken = async (): Promise<TokenResponse> => {
    issued += 1;
    return {
      access_token: `token-${issued}`,
      token_type: "api-key",
      expires_in: 86_400,
      expires_at: new Date(clock.now() + 86_400_000).toISOString(),
    };
  };
  return { fetchToken, issued: () => issued };
}

describe("one token per run (rule 1)", () => {
  it("asks once for many calls, also when they ask at the same moment", async () => {
    const clock = new FakeClock();
    const { fetchToken, issued } = issuer(clock);
    const cache = new TokenCache(clock, fetchToken);
    const tokens = await Promise.all(Array.from({ length: 10 }, () => cache.get()));
    for (let i = 0; i < 50; i++) tokens.push(await cache.get());
    expect(new Set(tokens)).toEqual(new Set(["token-1"]));
    expect(issued()).toBe(1);
    expect(cache.requests).toBe(1);
  });

  it("refreshes only shortly before the token expires", async () => {
    const clock = new FakeClock();
    const { fetchToken, issued } = issuer(clock);
    const cache = new TokenCache(clock, fetchToken, { refreshMarginMs: 5 * 60_000 });
    await cache.get();
    clock.advance(86_400_000 - 5 * 60_000 - 1); // a millisecond before the margin
    expect(await cache.get()).toBe("token-1");
    clock.advance(1);
    expect(await cache.get()).toBe("token-2");
    expect(await cache.get()).toBe("token-2");
    expect(issued()).toBe(2);
  });

  it("uses a token given up front (TESTBAY_TOKEN) and makes no token call, ever", async () => {
    const clock = new FakeClock();
    const { fetchToken, issued } = issuer(clock);
    const cache = new TokenCache(clock, fetchToken, { token: "from-env" });
    expect(await cache.get()).toBe("from-env");
    clock.advance(10 * 86_400_000);
    expect(await cache.get()).toBe("from-env");
    expect(issued()).toBe(0);
  });

  it("asks for a new token after the server refused the current one as revoked, once, and keeps a given one", async () => {
    const clock = new FakeClock();
    const { fetchToken, issued } = issuer(clock);
    const cache = new TokenCache(clock, fetchToken);
    expect(await cache.get()).toBe("token-1");
    cache.discard("token-0"); // an older token's refusal, arriving late: the current one stays
    expect(await cache.get()).toBe("token-1");
    cache.discard("token-1");
    expect(await cache.get()).toBe("token-2");
    expect(await cache.get()).toBe("token-2");
    expect(issued()).toBe(2);

    const given = new TokenCache(clock, fetchToken, { token: "from-env" });
    given.discard("from-env");
    expect(await given.get()).toBe("from-env");
  });

  it("says what to set when it has neither a token nor credentials", async () => {
    const cache = new TokenCache(new FakeClock(), undefined);
    await expect(cache.get()).rejects.toThrow(/TESTBAY_TOKEN.*TESTBAY_CLIENT_ID/);
  });

  it("does not keep a failed token request: the next call asks again", async () => {
    const clock = new FakeClock();
    let calls = 0;
    const cache = new TokenCache(clock, async () => {
      calls += 1;
      if (calls === 1) throw new Error("down");
      return { access_token: "t", token_type: "api-key", expires_in: 86_400, expires_at: "" };
    });
    await expect(cache.get()).rejects.toThrow("down");
    expect(await cache.get()).toBe("t");
  });
});

describe("a caller's signal while the token is on its way", () => {
  /** A token endpoint that answers only when told to; counts its requests. */
  function heldIssuer() {
    let answer: (response: TokenResponse) => void = () => {};
    let requests = 0;
    const fetchToken = () => {
      requests += 1;
      return new Promise<TokenResponse>((resolve) => {
        answer = resolve;
      });
    };
    const issue = (token: string) =>
      answer({ access_token: token, token_type: "api-key", expires_in: 86_400, expires_at: "" });
    return { fetchToken, issue, requests: () => requests };
  }

  it("stops that caller's wait with the abort, while another caller of the same request still gets the token", async () => {
    const clock = new FakeClock();
    const endpoint = heldIssuer();
    const cache = new TokenCache(clock, endpoint.fetchToken);
    const controller = new AbortController();
    const stopping = cache.get(controller.signal);
    const staying = cache.get();
    const reason = new Error("agent stopping");
    controller.abort(reason);
    await expect(stopping).rejects.toBe(reason);

    endpoint.issue("token-1");
    await expect(staying).resolves.toBe("token-1");
    // The one request went on and its token is kept: the next call asks for none.
    expect(await cache.get()).toBe("token-1");
    expect(endpoint.requests()).toBe(1);
  });

  it("starts no request for a caller whose signal has already fired", async () => {
    const endpoint = heldIssuer();
    const cache = new TokenCache(new FakeClock(), endpoint.fetchToken);
    const controller = new AbortController();
    controller.abort();
    await expect(cache.get(controller.signal)).rejects.toMatchObject({ name: "AbortError" });
    expect(endpoint.requests()).toBe(0);
  });
});
