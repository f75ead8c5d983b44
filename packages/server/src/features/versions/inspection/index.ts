export type { BinaryMetadata } from "./binary-metadata.ts";
export { inspectBinary } from "./inspect-binary.ts";
export { UnsupportedBinaryError } from "./unsupported-binary-error.ts";
