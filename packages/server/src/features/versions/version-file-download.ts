import { ProblemResponses } from "../../http/problem.schema.ts";
import { VersionParams } from "./versions.schemas.ts";

/** The route schema of a GET that serves a version's stored file (its binary, its test package) with sendStoredFile. */
export function versionFileDownloadSchema(summary: string) {
  return {
    summary,
    description:
      "Supports a single Range (bytes=first-last, first-, -suffix): 206 with Content-Range, 416 past the end. ETag is the SHA-256.",
    tags: ["apps"],
    params: VersionParams,
    response: { ...ProblemResponses },
  };
}
