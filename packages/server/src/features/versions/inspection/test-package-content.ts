import type { InstrumentationInfo } from "./instrumentation-manifest.ts";
import type { XctestInfo } from "./xctest-info.ts";

/** What was read from a test package, by its format: an instrumentation APK or an XCUITest bundle zip. */
export type TestPackageContent =
  | { format: "apk"; test: InstrumentationInfo }
  | { format: "xctest"; test: XctestInfo };
