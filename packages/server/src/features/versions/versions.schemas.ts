import { Type } from "typebox";
import { PageQuery } from "../../http/pagination.ts";
import { PackageName } from "../apps/index.ts";
import { TestPackageView } from "./test-packages/test-packages.schemas.ts";

/** API.md §4: 1–128 of A-Za-z0-9._+- starting with a letter or digit. Never used in a file path. */
export const VersionId = Type.String({
  minLength: 1,
  maxLength: 128,
  pattern: "^[A-Za-z0-9][A-Za-z0-9._+-]{0,127}$",
  examples: ["1.4.2", "2.0.0-rc.1+build.77"],
});

export const VersionParams = Type.Object({ package_name: PackageName, version: VersionId });

export const BinaryMetadataSchema = Type.Object(
  {
    format: Type.Union([Type.Literal("apk"), Type.Literal("aab"), Type.Literal("ipa"), Type.Literal("app")]),
    platform: Type.Union([Type.Literal("android"), Type.Literal("ios")]),
    package_name: Type.String(),
    version_name: Type.Union([Type.String(), Type.Null()]),
    version_code: Type.Union([Type.Integer(), Type.String(), Type.Null()], {
      description: "Android versionCode (integer) or iOS CFBundleVersion (string)",
    }),
    min_sdk: Type.Union([Type.Integer(), Type.Null()]),
    target_sdk: Type.Union([Type.Integer(), Type.Null()]),
    min_os_version: Type.Union([Type.String(), Type.Null()]),
    abis: Type.Array(Type.String()),
    permissions: Type.Array(Type.String()),
    debuggable: Type.Boolean(),
    display_name: Type.Union([Type.String(), Type.Null()]),
  },
  { description: "What the server read from the binary itself." },
);

export const VersionView = Type.Object({
  package_name: Type.String(),
  version: Type.String(),
  size_bytes: Type.Integer(),
  sha256: Type.String({ description: "Hex SHA-256 of the binary" }),
  created_at: Type.String({ format: "date-time" }),
  binary: BinaryMetadataSchema,
  test_package: Type.Union([TestPackageView, Type.Null()], {
    description: "The version's test package (PUT …/test-package), null when it has none.",
  }),
});

export const VersionList = Type.Object({
  items: Type.Array(VersionView),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const VersionListQuery = Type.Object(PageQuery, { additionalProperties: false });
