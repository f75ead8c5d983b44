import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { roleFrom } from "./oidc-sign-in.ts";
import { type OidcPending, OidcStateSealer, safeNextPath } from "./oidc-state.ts";

const pending: OidcPending = {
  state: "state-1",
  nonce: "nonce-1",
  codeVerifier: "verifier-1",
  next: "/runs/exe_1",
  startedAt: 1_700_000_000_000,
};

const signingKey = () => generateKeyPairSync("ed25519").privateKey;

describe("the pending sign-in's cookie", () => {
  it("opens on any instance with the same signing key, and shows nothing in clear", () => {
    const key = signingKey();
    const sealed = new OidcStateSealer(key).seal(pending);
    expect(new OidcStateSealer(key).open(sealed)).toEqual(pending);
    expect(Buffer.from(sealed, "base64url").toString("latin1")).not.toContain("verifier-1");
  });

  it("does not open with another deployment's key, changed by one byte, or as garbage", () => {
    const key = signingKey();
    const sealed = new OidcStateSealer(key).seal(pending);
    expect(new OidcStateSealer(signingKey()).open(sealed)).toBeUndefined();
    const raw = Buffer.from(sealed, "base64url");
    raw[raw.length - 1] = (raw[raw.length - 1] ?? 0) ^ 1;
    expect(new OidcStateSealer(key).open(raw.toString("base64url"))).toBeUndefined();
    expect(new OidcStateSealer(key).open("not-a-cookie")).toBeUndefined();
  });
});

describe("safeNextPath", () => {
  it("keeps a path on this site, with its query", () => {
    expect(safeNextPath("/runs/exe_1?tab=logs")).toBe("/runs/exe_1?tab=logs");
  });

  it.each([
    undefined,
    "",
    "runs",
    "//evil.example",
    "/\\evil.example",
    "/runs\\..\\\\evil",
    "https://evil.example/",
    "javascript:alert(1)",
    "/\t/evil.example",
    "/\n/evil.example",
  ])("sends %j to /runs", (next) => {
    expect(safeNextPath(next)).toBe("/runs");
  });
});

describe("roleFrom (TESTBAY_OIDC_ROLE_CLAIM)", () => {
  it("takes a role name, or the highest role in a list", () => {
    expect(roleFrom("member")).toBe("member");
    expect(roleFrom(["staff", "viewer", "admin"])).toBe("admin");
  });

  it("gives no role for anything else, so the default applies", () => {
    for (const value of [undefined, null, "owner", "Admin", 3, ["staff"], { role: "admin" }]) {
      expect(roleFrom(value)).toBeUndefined();
    }
  });
});
