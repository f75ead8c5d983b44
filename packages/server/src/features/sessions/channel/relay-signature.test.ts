import { generateKeyPairSync } from "node:crypto";
import { describe, expect, it } from "vitest";
import { RelaySignature } from "./relay-signature.ts";

const key = () => generateKeyPairSync("ed25519").privateKey;

describe("RelaySignature", () => {
  const signingKey = key();
  let now = Date.parse("2026-11-28T08:00:00Z");
  const signature = new RelaySignature(signingKey, () => now);
  const body = JSON.stringify({ agent: { organizationId: "org_1", agentId: "a" }, command: {} });

  it("accepts what an instance with the same signing key signed", () => {
    const other = new RelaySignature(signingKey, () => now);
    expect(signature.verify(other.sign(body), body)).toBe(true);
  });

  it("refuses another body, another deployment's key, a missing or malformed header", () => {
    const header = signature.sign(body);
    expect(signature.verify(header, `${body} `)).toBe(false);
    expect(new RelaySignature(key(), () => now).verify(header, body)).toBe(false);
    expect(signature.verify(undefined, body)).toBe(false);
    expect(signature.verify("t=1,v1=zz", body)).toBe(false);
    // One hex digit of the MAC changed to another (a fixed replacement would leave it unchanged one time in 16).
    const tampered = header.replace(/v1=(.)/, (_, digit: string) => `v1=${digit === "0" ? "1" : "0"}`);
    expect(tampered).not.toBe(header);
    expect(signature.verify(tampered, body)).toBe(false);
  });

  it("refuses a signature more than a minute old or ahead (a replay)", () => {
    const header = signature.sign(body);
    now += 61_000;
    expect(signature.verify(header, body)).toBe(false);
    now -= 2 * 61_000;
    expect(signature.verify(header, body)).toBe(false);
    now += 61_000 + 30_000;
    expect(signature.verify(header, body)).toBe(true);
  });
});
