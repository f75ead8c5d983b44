/**
 * What a plan's device entries and sharded steps must say that JSON Schema cannot (API.md §5, §13): selectors
 * that contradict each other, or options that only mean something beside another. Each problem is named by its
 * JSON pointer, as the request validation names its own (400 invalid_request with `errors`).
 */
import { ApiError } from "../../errors.ts";
import { versionKey } from "../device-runs/index.ts";
import { type DeviceSpec, reservedEnvironmentKeys, type Step } from "./testplans.schemas.ts";

interface Problem {
  path: string;
  in: "body";
  message: string;
  fix: string;
}

export function devicesProblems(devices: readonly DeviceSpec[]): Problem[] {
  const problems: Problem[] = [];
  devices.forEach((device, i) => {
    const at = (field: string) => `/devices/${i}/${field}`;
    if (device.model !== undefined && device.models !== undefined) {
      problems.push({
        path: at("models"),
        in: "body",
        message: "cannot be given with model",
        fix: `Give either model (one model) or models (any of several): models: ${JSON.stringify([device.model, ...device.models.filter((m) => m !== device.model)])} covers both.`,
      });
    }
    if (device.platform !== "android") {
      for (const field of ["api_level_min", "api_level_max"] as const) {
        if (device[field] !== undefined) {
          problems.push({
            path: at(field),
            in: "body",
            message: "is for Android devices only",
            fix: "Choose iOS devices by os_version_min and os_version_max instead.",
          });
        }
      }
    }
    if (device.platform !== "android") {
      for (const field of ["locale", "orientation"] as const) {
        if (device[field] !== undefined) {
          problems.push({
            path: at(field),
            in: "body",
            message: "is for Android devices only for now",
            fix: `Leave ${field} out of this ${device.platform} entry: Testbay sets locale and orientation on Android devices only (API.md §14); an iOS test can set its own (XCUIDevice.shared.orientation, -AppleLanguages launch arguments).`,
          });
        }
      }
    }
    const { api_level_min: minLevel, api_level_max: maxLevel } = device;
    if (minLevel !== undefined && maxLevel !== undefined && minLevel > maxLevel) {
      problems.push({
        path: at("api_level_min"),
        in: "body",
        message: `${minLevel} is above api_level_max ${maxLevel}: no device can match`,
        fix: `Make api_level_min at most api_level_max (swapped: api_level_min ${maxLevel}, api_level_max ${minLevel}).`,
      });
    }
    const { os_version_min: minVersion, os_version_max: maxVersion } = device;
    if (minVersion !== undefined && maxVersion !== undefined) {
      const [low, high] = [versionKey(minVersion), versionKey(maxVersion)];
      if (low !== null && high !== null && low > high) {
        problems.push({
          path: at("os_version_min"),
          in: "body",
          message: `${minVersion} is above os_version_max ${maxVersion} (versions compare a component at a time: 9 < 10 < 10.1): no device can match`,
          fix: `Make os_version_min at most os_version_max (swapped: os_version_min ${maxVersion}, os_version_max ${minVersion}).`,
        });
      }
    }
  });
  return problems;
}

/** target_minutes and max_shards say how `shards: "auto"` chooses; beside a number or nothing they would be ignored. */
export function shardsProblems(steps: readonly Step[]): Problem[] {
  const problems: Problem[] = [];
  steps.forEach((step, i) => {
    const options = step as { shards?: number | "auto"; target_minutes?: number; max_shards?: number };
    if (options.shards === "auto") return;
    for (const field of ["target_minutes", "max_shards"] as const) {
      if (options[field] !== undefined) {
        problems.push({
          path: `/steps/${i}/${field}`,
          in: "body",
          message: 'is only for shards: "auto"',
          fix: `Set shards: "auto" on this step to let the server choose the shards within ${field}, or leave ${field} out${options.shards === undefined ? "" : ` (shards: ${options.shards} is fixed)`}.`,
        });
      }
    }
  });
  return problems;
}

/**
 * An instrumentation step's environment and pull_filter (API.md §14): keys Testbay writes itself would clash with
 * its own -e arguments, and a filter that is no regular expression would fail on the agent after the run.
 */
export function deviceFilesProblems(steps: readonly Step[]): Problem[] {
  const problems: Problem[] = [];
  steps.forEach((step, i) => {
    if (step.type !== "instrumentation") return;
    for (const key of Object.keys(step.environment ?? {})) {
      const instead = Object.hasOwn(reservedEnvironmentKeys, key) ? reservedEnvironmentKeys[key] : undefined;
      if (instead === undefined) continue;
      problems.push({
        path: `/steps/${i}/environment/${key}`,
        in: "body",
        message: `is set by Testbay itself (-e ${key})`,
        fix: `Remove ${key} from environment and use the step's ${instead} instead.`,
      });
    }
    (step.pull_filter ?? []).forEach((pattern, j) => {
      const error = regExpError(pattern);
      if (error === null) return;
      problems.push({
        path: `/steps/${i}/pull_filter/${j}`,
        in: "body",
        message: `${JSON.stringify(pattern)} is not a JavaScript regular expression: ${error}`,
        fix: `Correct the pattern ${JSON.stringify(pattern)} (escape a literal ( [ { . * + ? with a backslash), or remove it.`,
      });
    });
  });
  return problems;
}

function regExpError(pattern: string): string | null {
  try {
    new RegExp(pattern);
    return null;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/** Throws the first problem's 400, with every problem in `errors`. */
export function checkPlanOptions(devices: readonly DeviceSpec[], steps: readonly Step[]): void {
  const problems = [...devicesProblems(devices), ...shardsProblems(steps), ...deviceFilesProblems(steps)];
  const first = problems[0];
  if (!first) return;
  throw new ApiError("invalid_request", {
    detail: `The plan is invalid: body ${first.path} ${first.message}.`,
    fix: first.fix,
    extra: { errors: problems.map(({ fix: _fix, ...problem }) => problem) },
  });
}
