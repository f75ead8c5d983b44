import { Type } from "typebox";
import { PageQuery } from "../../http/pagination.ts";

/**
 * Android package names and iOS bundle IDs: dot-separated segments of letters, digits, '_' and '-'. No
 * empty segment, so no "..", no leading or trailing dot, no slash: a name can never be a path.
 */
export const packageNamePattern = "^[A-Za-z0-9][A-Za-z0-9_-]*(\\.[A-Za-z0-9_-]+)*$";

export const PackageName = Type.String({
  minLength: 1,
  maxLength: 255,
  pattern: packageNamePattern,
  description: "Exact, case-sensitive package name (Android) or bundle ID (iOS).",
  examples: ["com.example.shop"],
});

export const Platform = Type.Union([Type.Literal("android"), Type.Literal("ios")]);

export const CreateAppBody = Type.Object(
  {
    package_name: PackageName,
    platform: Platform,
    display_name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  },
  { additionalProperties: false },
);

export const AppView = Type.Object({
  package_name: Type.String(),
  platform: Platform,
  display_name: Type.Union([Type.String(), Type.Null()]),
  created_at: Type.String({ format: "date-time" }),
  version_count: Type.Integer({
    minimum: 0,
    description: "How many versions the app has (deleted ones not).",
  }),
  latest_version: Type.Union(
    [
      Type.Object({
        version: Type.String(),
        created_at: Type.String({ format: "date-time", description: "When it was uploaded" }),
      }),
      Type.Null(),
    ],
    { description: "The most recently uploaded version, null before the first upload." },
  ),
});

export const AppParams = Type.Object({ package_name: PackageName });

export const AppList = Type.Object({
  items: Type.Array(AppView),
  next_cursor: Type.Union([Type.String(), Type.Null()]),
});

export const AppListQuery = Type.Object(PageQuery, { additionalProperties: false });
