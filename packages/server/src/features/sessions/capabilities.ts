import { testbayOwnedCapabilities } from "@testbay/client";
import type { Platform } from "../../db/schema.ts";
import type { DeviceSelectors } from "../device-runs/index.ts";
import { devicesProblems } from "../testplans/index.ts";
import { readSessionOptions, type SessionOptions, shown, testbayOptionsKey } from "./session-options.ts";
import { WebDriverError } from "./w3c-errors.ts";

/**
 * What a new session asks of Testbay, read from its W3C capabilities: the device, the app, Testbay's options and
 * the capabilities to pass on to Appium. Pure: what needs the database (is the version registered? is a device
 * free?) is for the caller.
 */
export interface SessionRequest {
  device: DeviceSelector;
  app: SessionApp;
  options: SessionOptions;
  /** What Appium gets: the merged capabilities without `testbay:options` and without the keys Testbay owns. */
  appiumCapabilities: Record<string, unknown>;
  /** Keys Testbay owns that the client sent and that were left out (the session's log can say so). */
  ignoredCapabilities: string[];
}

export interface DeviceSelector {
  platform: Platform;
  /** `testbay:options.model`, else `appium:deviceName`: the device's model, matched as a whole. */
  model: string | null;
  /** `appium:platformVersion`: the start of the device's OS version (device-runs/os-version-prefix.ts). */
  osVersionPrefix: string | null;
  /** §13's selectors from `testbay:options` (api_level_min, labels, …), as a plan's device entry has them. */
  selectors: DeviceSelectors;
}

export type SessionApp =
  /** `testbay:options.app` + `version`: a registered version, installed by the agent before Appium starts. */
  | { kind: "version"; packageName: string; version: string }
  /** `appium:app` as an http(s) URL: passed on, Appium downloads it on the agent's host. */
  | { kind: "url"; url: string }
  /** `appium:app` as anything else: a file on the agent's host, refused unless the agent allows local apps. */
  | { kind: "local"; path: string }
  /** No app: the session uses what is on the device (`appium:appPackage`, `appium:bundleId`). */
  | { kind: "none" };

/**
 * The capabilities the W3C specification defines (https://w3c.github.io/webdriver/#capabilities); every other key
 * needs a vendor prefix (`appium:`, `testbay:`…). Appium refuses unprefixed keys; Testbay refuses them at once,
 * before the session waits for a device, with the same rule.
 */
const standardCapabilities = new Set([
  "acceptInsecureCerts",
  "browserName",
  "browserVersion",
  "platformName",
  "pageLoadStrategy",
  "proxy",
  "setWindowRect",
  "timeouts",
  "strictFileInteractability",
  "unhandledPromptBehavior",
  "userAgent",
  "webSocketUrl",
]);

const platformsByName: Record<string, Platform> = { android: "android", ios: "ios" };

/**
 * Reads a new session's body: `{capabilities: {alwaysMatch?, firstMatch?}}`. Follows the W3C "processing
 * capabilities" steps (https://w3c.github.io/webdriver/#processing-capabilities): alwaysMatch defaults to `{}`,
 * firstMatch to `[{}]`; each firstMatch entry is merged with alwaysMatch, a key in both being `invalid argument`;
 * the first merged set Testbay can serve wins. Throws a WebDriverError: `invalid argument` for capabilities that
 * are malformed or break a rule, `session not created` for well-formed ones Testbay has no devices for.
 */
export function readNewSession(body: unknown): SessionRequest {
  const capabilities = isJsonObject(body) ? body.capabilities : undefined;
  if (!isJsonObject(capabilities)) {
    throw new WebDriverError(
      "invalid argument",
      isJsonObject(body) && body.desiredCapabilities !== undefined
        ? "Testbay takes W3C capabilities only: send {capabilities: {alwaysMatch: {...}}} (desiredCapabilities, of the older JSON Wire Protocol, is not read)"
        : `the new session's body must be {capabilities: {alwaysMatch, firstMatch}}; got ${shown(body)}`,
    );
  }
  const alwaysMatch = validated(capabilities.alwaysMatch ?? {}, "capabilities.alwaysMatch");
  const firstMatches = firstMatchList(capabilities.firstMatch).map((entry, index) =>
    validated(entry, `capabilities.firstMatch[${index}]`),
  );
  const merged = firstMatches.map((firstMatch, index) => merge(alwaysMatch, firstMatch, index));

  const problems: WebDriverError[] = [];
  for (const candidate of merged) {
    try {
      return readCapabilities(candidate);
    } catch (error) {
      if (!(error instanceof WebDriverError)) throw error;
      problems.push(error);
    }
  }
  // merged is never empty (firstMatchList gives at least one entry): every entry failed, so there is a first.
  const [first] = problems as [WebDriverError];
  if (problems.length === 1) throw first;
  throw new WebDriverError(
    first.error,
    `none of the ${problems.length} firstMatch entries can be served; the first: ${first.message}`,
  );
}

/**
 * firstMatch: undefined is `[{}]` (W3C). An empty list breaks the W3C rule (one or more entries) but the Appium
 * Java client's AppiumProtocolHandshake sent `firstMatch: []` in its 8.x releases
 * (appium/java-client, src/main/java/io/appium/java_client/remote/AppiumProtocolHandshake.java), and Appium
 * itself accepts it as `[{}]` (appium/appium, packages/base-driver/lib/basedriver/capabilities.ts): so does Testbay.
 */
function firstMatchList(firstMatch: unknown): unknown[] {
  if (firstMatch === undefined) return [{}];
  if (!Array.isArray(firstMatch)) {
    throw new WebDriverError(
      "invalid argument",
      `capabilities.firstMatch must be a JSON array of capability objects; got ${shown(firstMatch)}`,
    );
  }
  return firstMatch.length === 0 ? [{}] : firstMatch;
}

/**
 * W3C "validate capabilities": an object; entries whose value is null are left out (they mean "not set", and so
 * do not conflict in the merge); other keys are standard or vendor-prefixed.
 */
function validated(value: unknown, where: string): Record<string, unknown> {
  if (!isJsonObject(value)) {
    throw new WebDriverError("invalid argument", `${where} must be a JSON object; got ${shown(value)}`);
  }
  const entries = Object.entries(value).filter(([, entry]) => entry !== null);
  const unprefixed = entries
    .map(([key]) => key)
    .filter((key) => !standardCapabilities.has(key) && !key.includes(":"));
  if (unprefixed.length > 0) {
    throw new WebDriverError(
      "invalid argument",
      `${where}: ${unprefixed.join(", ")} ${unprefixed.length === 1 ? "is not a standard capability and has" : "are not standard capabilities and have"} no vendor prefix; Appium's own capabilities are written appium:NAME (e.g. appium:${unprefixed[0]})`,
    );
  }
  return Object.fromEntries(entries);
}

function merge(
  alwaysMatch: Record<string, unknown>,
  firstMatch: Record<string, unknown>,
  index: number,
): Record<string, unknown> {
  const both = Object.keys(firstMatch).find((key) => key in alwaysMatch);
  if (both !== undefined) {
    throw new WebDriverError(
      "invalid argument",
      `${both} is in both capabilities.alwaysMatch and capabilities.firstMatch[${index}]; give it in one of them`,
    );
  }
  return { ...alwaysMatch, ...firstMatch };
}

/** One merged set of capabilities, read. */
function readCapabilities(capabilities: Record<string, unknown>): SessionRequest {
  const unknownTestbayKey = Object.keys(capabilities).find(
    (key) => key.startsWith("testbay:") && key !== testbayOptionsKey,
  );
  if (unknownTestbayKey !== undefined) {
    throw new WebDriverError(
      "invalid argument",
      `${unknownTestbayKey} is not a Testbay capability; Testbay's settings go in ${testbayOptionsKey}`,
    );
  }
  const options = readSessionOptions(capabilities[testbayOptionsKey]);
  const device: DeviceSelector = {
    platform: platformOf(capabilities.platformName, options.platform),
    model: options.model ?? optionalText(capabilities, "appium:deviceName"),
    osVersionPrefix: optionalText(capabilities, "appium:platformVersion"),
    selectors: options.selectors,
  };
  refuseContradictions(device);
  const app = appOf(capabilities["appium:app"], options);

  const appiumCapabilities: Record<string, unknown> = {};
  const ignoredCapabilities: string[] = [];
  for (const [key, value] of Object.entries(capabilities)) {
    if (key === testbayOptionsKey) continue;
    if ((testbayOwnedCapabilities as readonly string[]).includes(key)) ignoredCapabilities.push(key);
    else appiumCapabilities[key] = value;
  }
  return { device, app, options, appiumCapabilities, ignoredCapabilities };
}

/**
 * Selectors no device can meet together, refused as a plan's device entry is (testplans' devicesProblems: model
 * with models, a minimum above its maximum, an API level for iOS), in WebDriver's words.
 */
function refuseContradictions(device: DeviceSelector): void {
  const entry = {
    platform: device.platform,
    ...(device.model === null ? {} : { model: device.model }),
    ...device.selectors,
  };
  const [problem] = devicesProblems([entry]);
  if (problem === undefined) return;
  const key = problem.path.split("/").at(-1);
  throw new WebDriverError(
    "invalid argument",
    `${testbayOptionsKey}.${key}: ${problem.message}. ${problem.fix}`,
  );
}

/**
 * `platformName` names the device's platform for Appium's own drivers (`Android`, `iOS`, any case). Other drivers
 * have their own (Appium's fake driver: `Fake`): their sessions say the platform in `testbay:options.platform`.
 */
function platformOf(platformName: unknown, optionsPlatform: string | null): Platform {
  if (platformName !== undefined && typeof platformName !== "string") {
    throw new WebDriverError("invalid argument", `platformName must be a string; got ${shown(platformName)}`);
  }
  const fromName = platformName === undefined ? undefined : platformsByName[platformName.toLowerCase()];
  const fromOptions = optionsPlatform === null ? undefined : platformsByName[optionsPlatform.toLowerCase()];
  if (optionsPlatform !== null && fromOptions === undefined) {
    throw new WebDriverError(
      "session not created",
      `${testbayOptionsKey}.platform ${shown(optionsPlatform)} is not a platform of Testbay's devices: use Android or iOS`,
    );
  }
  if (fromName !== undefined && fromOptions !== undefined && fromName !== fromOptions) {
    throw new WebDriverError(
      "invalid argument",
      `platformName ${shown(platformName)} and ${testbayOptionsKey}.platform ${shown(optionsPlatform)} name different platforms; leave out ${testbayOptionsKey}.platform or make them agree`,
    );
  }
  const platform = fromName ?? fromOptions;
  if (platform !== undefined) return platform;
  throw new WebDriverError(
    "session not created",
    platformName === undefined
      ? `platformName is required: Android or iOS (a driver whose platformName is something else also needs ${testbayOptionsKey}.platform)`
      : `platformName ${shown(platformName)} is not a platform of Testbay's devices (Android or iOS); a driver with its own platformName needs ${testbayOptionsKey}.platform: "Android" or "iOS"`,
  );
}

function appOf(appiumApp: unknown, options: SessionOptions): SessionApp {
  if (options.app !== null || options.version !== null) {
    if (options.app === null || options.version === null) {
      const missing = options.app === null ? "app" : "version";
      throw new WebDriverError(
        "invalid argument",
        `${testbayOptionsKey}.${missing} is missing: a registered app is given by both ${testbayOptionsKey}.app (its package name) and ${testbayOptionsKey}.version`,
      );
    }
    if (appiumApp !== undefined) {
      throw new WebDriverError(
        "invalid argument",
        `give the app either as ${testbayOptionsKey}.app and version (a registered version) or as appium:app, not both`,
      );
    }
    return { kind: "version", packageName: options.app, version: options.version };
  }
  if (appiumApp === undefined) return { kind: "none" };
  if (typeof appiumApp !== "string" || appiumApp.trim() === "") {
    throw new WebDriverError(
      "invalid argument",
      `appium:app must be an http(s) URL or a path; got ${shown(appiumApp)}`,
    );
  }
  if (/^https?:\/\//i.test(appiumApp)) {
    if (!URL.canParse(appiumApp)) {
      throw new WebDriverError("invalid argument", `appium:app ${shown(appiumApp)} is not a valid URL`);
    }
    return { kind: "url", url: appiumApp };
  }
  return { kind: "local", path: appiumApp };
}

function optionalText(capabilities: Record<string, unknown>, key: string): string | null {
  const value = capabilities[key];
  if (value === undefined) return null;
  if (typeof value !== "string" || value.trim() === "") {
    throw new WebDriverError("invalid argument", `${key} must be a non-empty string; got ${shown(value)}`);
  }
  return value;
}

function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
