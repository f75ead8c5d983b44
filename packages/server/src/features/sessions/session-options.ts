import { type Static, type TSchema, Type } from "typebox";
import Value from "typebox/value";
import { PackageName } from "../apps/apps.schemas.ts";
import type { DeviceSelectors } from "../device-runs/index.ts";
import { CiMetadata } from "../executions/executions.schemas.ts";
import { DeviceSpec } from "../testplans/index.ts";
import { VersionId } from "../versions/versions.schemas.ts";
import { WebDriverError } from "./w3c-errors.ts";

/** The capability under which a WebDriver client gives Testbay its own settings for the session. */
export const testbayOptionsKey = "testbay:options";

/**
 * One option: its schema, whose `description` is the rule said to the client when a value breaks it
 * ("testbay:options.KEY must be RULE; got VALUE"), so the rule and its wording are written once.
 */
const option = <T extends TSchema>(schema: T, rule: string) =>
  Type.Optional({ ...schema, description: rule });

/**
 * `testbay:options`. The app and version use the rules of the `/v1` API's package names and version IDs
 * (features/apps/apps.schemas.ts, features/versions/versions.schemas.ts) and `ci` is the trigger's ci metadata
 * (features/executions/executions.schemas.ts), so a session is found by the same filters as a run.
 * The longest duration is a test plan's longest timeout (24 hours, features/testplans/testplans.schemas.ts).
 */
export const SessionOptionsSchema = Type.Object(
  {
    platform: option(Type.String(), 'the platform of the devices wanted: "Android" or "iOS" (any case)'),
    model: option(Type.String({ minLength: 1, maxLength: 100 }), "a device model, 1 to 100 characters"),
    app: option(PackageName, "a registered app's package name (Android) or bundle ID (iOS)"),
    version: option(VersionId, "a version ID of that app, as uploaded (e.g. 1.4.2)"),
    name: option(Type.String({ minLength: 1, maxLength: 200 }), "the session's name, 1 to 200 characters"),
    build: option(Type.String({ minLength: 1, maxLength: 200 }), "a build label, 1 to 200 characters"),
    ci: option(
      CiMetadata,
      "an object with provider, branch, commit, pull_request (strings) and build_url (an http or https link), as a trigger's ci",
    ),
    idle_timeout_seconds: option(
      Type.Integer({ minimum: 1, maximum: 3600 }),
      "a whole number of seconds from 1 to 3600 (default 90)",
    ),
    max_duration_seconds: option(
      Type.Integer({ minimum: 30, maximum: 24 * 3600 }),
      "a whole number of seconds from 30 to 86400 (default 1800)",
    ),
    queue_timeout_seconds: option(
      Type.Integer({ minimum: 0, maximum: 3600 }),
      "a whole number of seconds from 0 to 3600 (default 300; 0: fail at once when no device is free)",
    ),
    record_video: option(Type.Boolean(), "true or false (default true)"),
    // API.md §13's device selectors, with a plan's device entry's schemas (features/testplans), so that both
    // choose devices by the same rules (device-runs/device-selectors.ts).
    api_level_min: option(DeviceSpec.properties.api_level_min, "an Android API level from 1 to 1000"),
    api_level_max: option(DeviceSpec.properties.api_level_max, "an Android API level from 1 to 1000"),
    os_version_min: option(
      DeviceSpec.properties.os_version_min,
      'a version of dotted numbers, such as "17.4"',
    ),
    os_version_max: option(
      DeviceSpec.properties.os_version_max,
      'a version of dotted numbers, such as "17.99"',
    ),
    models: option(
      DeviceSpec.properties.models,
      "a list of 1 to 20 different models, 1 to 100 characters each",
    ),
    abi: option(DeviceSpec.properties.abi, 'a device ABI, 1 to 50 characters ("arm64-v8a", "x86_64")'),
    emulator: option(
      DeviceSpec.properties.emulator,
      "true (emulators and simulators) or false (real devices)",
    ),
    labels: option(
      DeviceSpec.properties.labels,
      "an object of up to 16 labels, KEY: VALUE, as the device's agent gives them (--label KEY=VALUE)",
    ),
  },
  { additionalProperties: false },
);

type RawSessionOptions = Static<typeof SessionOptionsSchema>;

/** `testbay:options` with the defaults filled in (the device and app keys are read by capabilities.ts). */
export interface SessionOptions {
  platform: string | null;
  model: string | null;
  app: string | null;
  version: string | null;
  name: string | null;
  build: string | null;
  ci: Static<typeof CiMetadata> | null;
  idleTimeoutSeconds: number;
  maxDurationSeconds: number;
  queueTimeoutSeconds: number;
  recordVideo: boolean;
  /** §13's device selectors the client gave (none: {}). */
  selectors: DeviceSelectors;
}

export const sessionOptionDefaults = {
  idleTimeoutSeconds: 90,
  maxDurationSeconds: 1800,
  queueTimeoutSeconds: 300,
  recordVideo: true,
} as const;

const optionNames = Object.keys(SessionOptionsSchema.properties);

/**
 * Reads `testbay:options` (undefined: none given). Throws `invalid argument` naming the first wrong key, its rule
 * and the value given, so a typo or a wrong type fails at the new session, before the session waits for a device.
 */
export function readSessionOptions(raw: unknown): SessionOptions {
  if (raw === undefined) return withDefaults({});
  if (typeof raw !== "object" || raw === null || Array.isArray(raw)) {
    throw new WebDriverError(
      "invalid argument",
      `${testbayOptionsKey} must be a JSON object of Testbay's options (${optionNames.join(", ")}); got ${shown(raw)}`,
    );
  }
  const values = raw as Record<string, unknown>;
  const unknownKey = Object.keys(values).find((key) => !optionNames.includes(key));
  if (unknownKey !== undefined) {
    throw new WebDriverError(
      "invalid argument",
      `${testbayOptionsKey}.${unknownKey} is not a Testbay option; the options are ${optionNames.join(", ")}`,
    );
  }
  const [problem] = Value.Errors(SessionOptionsSchema, values);
  if (problem !== undefined) {
    const [key = "", ...inner] = problem.instancePath.split("/").slice(1);
    const rule =
      SessionOptionsSchema.properties[key as keyof RawSessionOptions]?.description ?? problem.message;
    // Inside `ci`, say which field broke which rule too: the rule of `ci` alone does not.
    const detail = inner.length > 0 ? ` (${[key, ...inner].join(".")} ${problem.message})` : "";
    throw new WebDriverError(
      "invalid argument",
      `${testbayOptionsKey}.${key} must be ${rule}; got ${shown(values[key])}${detail}`,
    );
  }
  return withDefaults(values as RawSessionOptions);
}

function withDefaults(options: RawSessionOptions): SessionOptions {
  return {
    platform: options.platform ?? null,
    model: options.model ?? null,
    app: options.app ?? null,
    version: options.version ?? null,
    name: options.name ?? null,
    build: options.build ?? null,
    ci: options.ci ?? null,
    idleTimeoutSeconds: options.idle_timeout_seconds ?? sessionOptionDefaults.idleTimeoutSeconds,
    maxDurationSeconds: options.max_duration_seconds ?? sessionOptionDefaults.maxDurationSeconds,
    queueTimeoutSeconds: options.queue_timeout_seconds ?? sessionOptionDefaults.queueTimeoutSeconds,
    recordVideo: options.record_video ?? sessionOptionDefaults.recordVideo,
    selectors: Object.fromEntries(
      selectorNames.filter((key) => options[key] !== undefined).map((key) => [key, options[key]]),
    ) as DeviceSelectors,
  };
}

const selectorNames = [
  "api_level_min",
  "api_level_max",
  "os_version_min",
  "os_version_max",
  "models",
  "abi",
  "emulator",
  "labels",
] as const satisfies ReadonlyArray<keyof DeviceSelectors & keyof RawSessionOptions>;

/** A value as the client wrote it, cut short: messages quote what was sent without repeating a whole blob. */
export function shown(value: unknown): string {
  const text = value === undefined ? "nothing" : JSON.stringify(value);
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
