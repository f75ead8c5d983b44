import type { ConversionContext } from "./conversion-context.ts";

/** The shared contract's limits on `environment` (API.md §14, /tmp/briefs/common-29.md). */
const keyPattern = /^[A-Za-z_][A-Za-z0-9_.]{0,99}$/;
const maxEntries = 50;
const maxValueLength = 1000;

/** Filter keys the server refuses in `environment`: they have their place in test-targets. */
const filterKeys = new Set([
  "class",
  "notClass",
  "package",
  "notPackage",
  "annotation",
  "notAnnotation",
  "size",
]);
/** Keys Testbay sets itself to list, shard and report tests. */
const ownKeys = new Set(["testFile", "notTestFile", "log", "targetInstrumentation"]);
/** Flank's coverage switches: the step's `coverage: true`, with Testbay choosing the file's path. */
const coveragePathKeys = new Set(["coverageFile", "coverageFilePath"]);

export interface EnvironmentMapping {
  environment: Record<string, string> | undefined;
  coverage: boolean | undefined;
}

/**
 * `gcloud.environment-variables` → `environment` (each `-e KEY VALUE`). `coverage: true` becomes the step's
 * `coverage` (its file pulled as coverage/<shard>/…); clearPackageData stays, it is how the orchestrator is
 * told to clear the app between tests.
 */
export function environmentOf(context: ConversionContext): EnvironmentMapping {
  const variables = context.gcloud("environment-variables");
  if (!variables || variables.value === null) return { environment: undefined, coverage: undefined };
  if (typeof variables.value !== "object" || Array.isArray(variables.value)) {
    context.error(variables, "gcloud.environment-variables must be a mapping of KEY: VALUE");
    return { environment: undefined, coverage: undefined };
  }
  const environment: Record<string, string> = {};
  let coverage: boolean | undefined;
  for (const [key, raw] of Object.entries(variables.value as Record<string, unknown>)) {
    const value = raw === null || raw === undefined ? "" : String(raw);
    const at = [key];
    if (key === "coverage") {
      coverage = value === "true";
      continue;
    }
    if (coveragePathKeys.has(key)) {
      context.warn(
        variables,
        `gcloud.environment-variables.${key} is not used: with coverage, Testbay writes each shard's file itself and keeps it as the artifact coverage/<shard>/<file>`,
        at,
      );
      continue;
    }
    if (filterKeys.has(key)) {
      context.error(
        variables,
        `gcloud.environment-variables.${key} is a test filter: write it in gcloud.test-targets ("${key} ${value}")`,
        at,
      );
      continue;
    }
    if (ownKeys.has(key)) {
      context.error(
        variables,
        `gcloud.environment-variables.${key} is set by Testbay itself (to list and shard the tests): remove it`,
        at,
      );
      continue;
    }
    if (!keyPattern.test(key)) {
      context.error(
        variables,
        `gcloud.environment-variables.${key}: a key is letters, digits, _ and . (not starting with a digit), at most 100 characters`,
        at,
      );
      continue;
    }
    if (value.length > maxValueLength) {
      context.error(
        variables,
        `gcloud.environment-variables.${key}: the value is ${value.length} characters, at most ${maxValueLength}`,
        at,
      );
      continue;
    }
    environment[key] = value;
  }
  if (Object.keys(environment).length > maxEntries) {
    context.error(
      variables,
      `gcloud.environment-variables has ${Object.keys(environment).length} entries, at most ${maxEntries}`,
    );
  }
  return { environment: Object.keys(environment).length > 0 ? environment : undefined, coverage };
}
