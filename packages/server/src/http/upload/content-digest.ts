import { ApiError } from "../../errors.ts";

export interface ExpectedDigest {
  algorithm: "sha-256" | "sha-512";
  value: Buffer;
}

const member = /^\s*([a-z0-9-]+)\s*=\s*:([A-Za-z0-9+/]*={0,2}):\s*$/;
const lengths = { "sha-256": 32, "sha-512": 64 } as const;

/**
 * The strongest digest we support from an RFC 9530 `Content-Digest` header (`sha-256=:<base64>:`), or
 * undefined when there is none. Unknown algorithms are ignored, as the RFC allows; a malformed header is an
 * error, since the caller clearly meant to have the body checked.
 */
export function parseContentDigest(header: string | undefined): ExpectedDigest | undefined {
  if (header === undefined) return undefined;
  const found = new Map<string, Buffer>();
  for (const part of header.split(",")) {
    const match = member.exec(part);
    if (!match) throw malformed();
    const [, algorithm = "", base64 = ""] = match;
    found.set(algorithm, Buffer.from(base64, "base64"));
  }
  for (const algorithm of ["sha-512", "sha-256"] as const) {
    const value = found.get(algorithm);
    if (!value) continue;
    if (value.length !== lengths[algorithm]) throw malformed();
    return { algorithm, value };
  }
  return undefined;
}

function malformed(): ApiError {
  return new ApiError("invalid_request", {
    detail: "The Content-Digest header is not of the form sha-256=:<base64 of the 32-byte digest>:.",
    fix: "Send Content-Digest: sha-256=:<base64 SHA-256 of the body>: (RFC 9530), or leave the header out.",
    extra: { errors: [{ path: "/content-digest", in: "headers", message: "is malformed" }] },
  });
}
