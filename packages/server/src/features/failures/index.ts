export { type FailureContext, recordFailureGroups, type StoredFailure } from "./failure-groups.writer.ts";
export { FRAMEWORK_PREFIXES, failureSignature } from "./failure-signature.ts";
export { createFailures } from "./failures.feature.ts";
export { FailuresService } from "./failures.service.ts";
