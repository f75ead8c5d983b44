import { describe, expect, it } from "vitest";
import { bearerMatches } from "./bearer-token.ts";

describe("bearerMatches", () => {
  const token = "s3cret-metrics-token";

  it("accepts the token sent as Prometheus's authorization option sends it, whatever the scheme's case", () => {
    expect(bearerMatches(`Bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`bearer ${token}`, token)).toBe(true);
    expect(bearerMatches(`BEARER\t${token}`, token)).toBe(true);
  });

  it("refuses no header, another scheme, and a token that is not exactly the one set", () => {
    expect(bearerMatches(undefined, token)).toBe(false);
    expect(bearerMatches("", token)).toBe(false);
    expect(bearerMatches(token, token)).toBe(false);
    expect(bearerMatches(`Basic ${token}`, token)).toBe(false);
    expect(bearerMatches(`Bearer ${token}x`, token)).toBe(false);
    expect(bearerMatches(`Bearer ${token.slice(0, -1)}`, token)).toBe(false);
    expect(bearerMatches(`Bearer ${token.toUpperCase()}`, token)).toBe(false);
    expect(bearerMatches(`Bearer ${token} extra`, token)).toBe(false);
    expect(bearerMatches("Bearer ", token)).toBe(false);
  });
});
