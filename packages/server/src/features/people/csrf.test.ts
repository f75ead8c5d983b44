import { describe, expect, it } from "vitest";
import { csrfRefusal, originOf } from "./csrf.ts";
import { csrfTokenFor, newSessionId, sessionIdHash } from "./session-ids.ts";

const session = newSessionId();
const token = csrfTokenFor(session);
const sameOrigins = ["http://127.0.0.1:8080", "https://testbay.example.com"];

describe("csrfRefusal", () => {
  it("admits the session's token with a same-origin Origin, or with none", () => {
    expect(csrfRefusal({ presentedToken: token, expectedToken: token, origin: undefined, sameOrigins })).toBe(
      undefined,
    );
    for (const origin of ["http://127.0.0.1:8080", "https://TESTBAY.example.com"]) {
      expect(
        csrfRefusal({ presentedToken: token, expectedToken: token, origin, sameOrigins }),
      ).toBeUndefined();
    }
  });

  it("refuses a missing, empty, wrong or other session's token", () => {
    const other = csrfTokenFor(newSessionId());
    for (const presentedToken of [undefined, "", other, token.slice(1), `${token}x`]) {
      expect(csrfRefusal({ presentedToken, expectedToken: token, origin: undefined, sameOrigins })).toMatch(
        /x-csrf-token/,
      );
    }
  });

  it("refuses the right token from another origin, another port, another scheme, or an opaque one", () => {
    for (const origin of [
      "https://evil.example",
      "http://127.0.0.1:8081",
      "http://testbay.example.com",
      "null",
    ]) {
      expect(csrfRefusal({ presentedToken: token, expectedToken: token, origin, sameOrigins })).toMatch(
        /another origin/,
      );
    }
  });
});

describe("session IDs and their derived values", () => {
  it("derives a token and a table key that are neither the ID nor each other", () => {
    expect(session).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(token).not.toBe(session);
    expect(sessionIdHash(session)).not.toContain(session);
    expect(Buffer.from(token, "base64url").toString("hex")).not.toBe(sessionIdHash(session));
    expect(csrfTokenFor(session)).toBe(token);
    expect(newSessionId()).not.toBe(session);
  });

  it("reads origins as browsers send them", () => {
    expect(originOf("https://Testbay.Example.com/v1")).toBe("https://testbay.example.com");
    expect(originOf("http://127.0.0.1:8080/v1")).toBe("http://127.0.0.1:8080");
    expect(originOf("not a url")).toBeUndefined();
  });
});
