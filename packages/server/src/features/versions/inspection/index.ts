export type { BinaryMetadata } from "./binary-metadata.ts";
export { inspectBinary } from "./inspect-binary.ts";
export { inspectTestPackage, XctestPackageError } from "./inspect-test-package.ts";
export type { InstrumentationInfo } from "./instrumentation-manifest.ts";
export type { TestPackageContent } from "./test-package-content.ts";
export { UnsupportedBinaryError } from "./unsupported-binary-error.ts";
export type { XctestInfo, XctestTarget } from "./xctest-info.ts";
