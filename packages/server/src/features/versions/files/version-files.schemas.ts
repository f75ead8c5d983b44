import { Type } from "typebox";
import { versionFileNamePattern } from "../../testplans/index.ts";
import { VersionParams } from "../versions.schemas.ts";

/** API.md §14: 1–100 of A-Za-z0-9._- (the plan's additional_apks and push[].file name files by it). */
export const VersionFileName = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: versionFileNamePattern,
  examples: ["test-services.apk", "fixtures.json"],
});

export const VersionFileParams = Type.Object({
  package_name: VersionParams.properties.package_name,
  version: VersionParams.properties.version,
  name: VersionFileName,
});

export const VersionFileView = Type.Object(
  {
    name: Type.String(),
    size_bytes: Type.Integer(),
    sha256: Type.String({ description: "Hex SHA-256 of the file" }),
    created_at: Type.String({ format: "date-time" }),
  },
  { description: "A file uploaded with a version for its tests (API.md §14)." },
);

export const VersionFileList = Type.Object({
  items: Type.Array(VersionFileView, { description: "Every file of the version, by name (at most 20)" }),
});
