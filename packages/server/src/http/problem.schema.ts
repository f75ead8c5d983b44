import { Type } from "typebox";

/** RFC 9457 problem document as every error response carries it (extra members pass through). */
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    code: Type.String({ description: "Stable, machine-readable error code." }),
    reason: Type.Optional(
      Type.String({ description: "Finer cause within the code, where there are several." }),
    ),
    detail: Type.String(),
    fix: Type.String({ description: "What the caller should do about it." }),
    retryable: Type.Boolean(),
    request_id: Type.String(),
  },
  { additionalProperties: true, $id: "Problem", title: "Problem" },
);

const ref = Type.Unsafe({ $ref: "Problem#" });

/** Error responses for a route's OpenAPI entry. */
export const ProblemResponses = {
  "4xx": { ...ref, description: "A problem the caller can fix (see `code`, `reason` and `fix`)." },
  "5xx": { ...ref, description: "A server failure; `request_id` identifies it in the server's logs." },
};
