import { createHash } from "node:crypto";
import { describe, expect, it } from "vitest";
import { ApiError } from "../../errors.ts";
import { parseContentDigest } from "./content-digest.ts";

const sha256 = createHash("sha256").update("hello").digest();
const sha512 = createHash("sha512").update("hello").digest();

describe("parseContentDigest", () => {
  it("reads sha-256 and prefers sha-512 when both are sent", () => {
    expect(parseContentDigest(`sha-256=:${sha256.toString("base64")}:`)).toEqual({
      algorithm: "sha-256",
      value: sha256,
    });
    expect(
      parseContentDigest(`sha-256=:${sha256.toString("base64")}:, sha-512=:${sha512.toString("base64")}:`),
    ).toEqual({ algorithm: "sha-512", value: sha512 });
  });

  it("ignores a header with only algorithms it does not know, and no header at all", () => {
    expect(parseContentDigest("md5=:XUFAKrxLKna5cZ2REBfFkg==:")).toBeUndefined();
    expect(parseContentDigest(undefined)).toBeUndefined();
  });

  it("rejects malformed values as invalid_request", () => {
    for (const header of [
      "sha-256=abc",
      `sha-256=:${sha256.toString("hex")}:`,
      "sha-256=:AAAA:",
      "garbage",
      "",
    ]) {
      expect(() => parseContentDigest(header), header).toThrow(ApiError);
    }
  });
});
