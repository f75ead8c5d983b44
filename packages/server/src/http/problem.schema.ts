import { Type } from "typebox";
import { type ErrorCode, errorCatalog } from "../errors.ts";

/** RFC 9457 problem document as every error response carries it (extra members pass through). */
export const Problem = Type.Object(
  {
    type: Type.String({ description: "A URI reference to the problem type: /problems/{code}." }),
    title: Type.String(),
    status: Type.Integer(),
    // An enum, not a free string, so generated clients get one ErrorCode union shared with the server.
    code: Type.Unsafe<ErrorCode>({
      type: "string",
      enum: Object.keys(errorCatalog),
      description: "Stable, machine-readable error code; GET /problems/{code} describes each.",
    }),
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
