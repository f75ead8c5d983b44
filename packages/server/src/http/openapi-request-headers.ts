/**
 * Request headers some operations read, written out in each (not referenced): tools that walk the document
 * (the fuzz test among them) then find them without resolving parameter references.
 */
export const requestHeaders = {
  ContentDigest: {
    name: "content-digest",
    in: "header",
    required: false,
    description:
      "`sha-256=:<base64 of the SHA-256>:` (RFC 9530): the upload is refused with 400 checksum_mismatch when the body does not match.",
    schema: { type: "string", maxLength: 200 },
  },
  Range: {
    name: "range",
    in: "header",
    required: false,
    description: "One byte range: `bytes=first-last`, `bytes=first-` or `bytes=-suffix`.",
    schema: { type: "string", maxLength: 200 },
  },
} satisfies Record<string, Record<string, unknown>>;

export type RequestHeader = keyof typeof requestHeaders;
