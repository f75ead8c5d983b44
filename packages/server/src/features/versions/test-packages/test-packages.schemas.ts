import { Type } from "typebox";

export const TestPackageView = Type.Object(
  {
    package_name: Type.String({ description: "The app's package name (the version's, not the test APK's)" }),
    version: Type.String(),
    format: Type.Union([Type.Literal("apk"), Type.Literal("xctest")], {
      description: "apk: an Android instrumentation APK. xctest (iOS XCUITest bundles) is not accepted yet.",
    }),
    size_bytes: Type.Integer(),
    sha256: Type.String({ description: "Hex SHA-256 of the package" }),
    created_at: Type.String({ format: "date-time" }),
    test: Type.Object(
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
      { description: "What the server read from the package itself." },
    ),
  },
  { description: "A version's test package (API.md §4b)." },
);
