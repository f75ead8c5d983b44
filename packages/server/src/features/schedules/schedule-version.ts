import { ApiError } from "../../errors.ts";

/**
 * Which version a schedule runs (API.md §15): `latest`, the app's most recently uploaded version;
 * `latest:branch=NAME`, the version of the most recent execution whose ci.branch is NAME; or one version by name.
 */
export type ScheduleVersion =
  | { kind: "latest" }
  | { kind: "branch"; branch: string }
  | { kind: "named"; version: string };

/** A version's name, as PUT /v1/apps/{package_name}/versions/{version} takes it (versions.schemas.ts VersionId). */
const versionName = /^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$/;
/** A branch as ci.branch holds it (executions.schemas.ts CiMetadata: up to 255 characters), with no control characters. */
const branchName = /^[^\p{Cc}]{1,255}$/u;
const branchPrefix = "latest:branch=";

/** Reads `version` of a schedule's body; anything else is a 400 invalid_request with the three forms. */
export function parseScheduleVersion(text: string): ScheduleVersion {
  if (text === "latest") return { kind: "latest" };
  if (text.startsWith(branchPrefix)) {
    const branch = text.slice(branchPrefix.length);
    if (branchName.test(branch)) return { kind: "branch", branch };
  } else if (versionName.test(text)) {
    return { kind: "named", version: text };
  }
  const message = `${JSON.stringify(text)} is not "latest", "latest:branch=NAME" or a version name`;
  throw new ApiError("invalid_request", {
    detail: `The request is invalid: body /version ${message}.`,
    fix: 'Give "latest" (the app\'s most recently uploaded version), "latest:branch=main" (the version of the most recent run whose ci.branch is main; 1–255 characters after the "="), or one version\'s name as it was uploaded ("1.4.2").',
    extra: { errors: [{ path: "/version", in: "body", message }] },
  });
}
