import { Type } from "typebox";

/** What an instrumentation APK's manifest says (format apk). */
export const InstrumentationTest = Type.Object(
  {
    package_name: Type.String({ description: "The test APK's own package, e.g. com.example.app.test" }),
    runner: Type.String({
      description: "<instrumentation android:name>, e.g. androidx.test.runner.AndroidJUnitRunner",
    }),
    target_package: Type.String({
      description: "<instrumentation android:targetPackage>: the app under test",
    }),
    min_sdk: Type.Union([Type.Integer(), Type.Null()]),
    target_sdk: Type.Union([Type.Integer(), Type.Null()]),
  },
  { description: "An Android instrumentation APK's <instrumentation> (format apk)." },
);

/** What an XCUITest bundle's .xctestrun says (format xctest). */
export const XctestTest = Type.Object(
  {
    xctestrun: Type.String({
      description:
        "The .xctestrun file's path inside the zip, for xcodebuild test-without-building -xctestrun",
    }),
    test_targets: Type.Array(
      Type.Object({
        name: Type.String({ description: "The test target, the first part of an -only-testing identifier" }),
        bundle_id: Type.Union([Type.String(), Type.Null()], {
          description:
            "The bundle ID of the tests' host (the -Runner app for UI tests), as the plist gives it",
        }),
        ui_target_app: Type.Union([Type.String(), Type.Null()], {
          description:
            "The bundle ID of the app the UI tests drive: the .xctestrun's UITargetAppBundleIdentifier, else the Info.plist of the zip's copy of the app (UITargetAppPath), else null (tests with no app, or a zip without the app). Agents test the version's own app either way",
        }),
      }),
    ),
  },
  { description: "An iOS XCUITest bundle's .xctestrun (format xctest)." },
);

const viewFields = {
  package_name: Type.String({
    description: "The app's package name (the version's, not the test package's)",
  }),
  version: Type.String(),
  size_bytes: Type.Integer(),
  sha256: Type.String({ description: "Hex SHA-256 of the package" }),
  created_at: Type.String({ format: "date-time" }),
};

/**
 * A test package by its format, each with what the server read from it: one object per format so clients
 * get `test` typed once they have looked at `format`.
 */
export const TestPackageView = Type.Union(
  [
    Type.Object({
      ...viewFields,
      format: Type.Literal("apk", { description: "An Android instrumentation APK" }),
      test: InstrumentationTest,
    }),
    Type.Object({
      ...viewFields,
      format: Type.Literal("xctest", {
        description: "A zip of what xcodebuild build-for-testing writes, for iOS",
      }),
      test: XctestTest,
    }),
  ],
  { description: "A version's test package (API.md §4b)." },
);
