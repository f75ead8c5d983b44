import { testbayOwnedCapabilities } from "@testbay/client";
/**
 * What the agent sends to Appium's `POST /session`, built from the job's capabilities (W3C, already merged
 * `alwaysMatch` × `firstMatch` by the server into one flat object). Testbay owns a few of them (API.md §12): the
 * reserved device's `appium:udid` and the per-device ports from the session's port block (port-blocks.ts), which
 * replace whatever the client sent; and `appium:app`, which must be the version the agent installed, a public
 * http(s) URL, or (only with `--appium-allow-local-apps`) a path on this host. Pure: the name lookup of an app URL
 * is app-url-guard.ts's `resolvedHostRefusal`, done by the caller.
 */
import { literalHostRefusal } from "./app-url-guard.ts";
import type { PortBlock } from "./port-blocks.ts";
import { SessionNotCreatedError } from "./w3c-error.ts";

export interface SessionDevice {
  serial: string;
  platform: "android" | "ios";
}

export interface SessionCapabilitiesInput {
  /** The job's capabilities, one flat W3C object. */
  requested: Record<string, unknown>;
  device: SessionDevice;
  ports: Pick<PortBlock, "driverPort" | "mjpegServerPort" | "proxyPort">;
  /** The installed version's file on this host when the session names a version (`testbay:options.app`). */
  installedAppPath: string | null;
  /** `--appium-allow-local-apps`. */
  allowLocalApps: boolean;
  /** `--appium-allow-private-app-urls`. */
  allowPrivateAppUrls: boolean;
}

/** Appium's W3C new-session payload: everything in `alwaysMatch`, one empty `firstMatch`. */
export interface NewSessionPayload {
  capabilities: { alwaysMatch: Record<string, unknown>; firstMatch: [Record<string, never>] };
}

export interface SessionCapabilities {
  payload: NewSessionPayload;
  /** The app URL Appium will download, for the caller's name lookup (resolvedHostRefusal); null if none. */
  appUrl: URL | null;
  /** Keys the client sent that Testbay replaced (for the session's log). */
  overridden: string[];
}

/** The ports each platform's driver opens for a device, in the port block's order. */
const portCapabilities = {
  android: {
    driverPort: "appium:systemPort",
    mjpegServerPort: "appium:mjpegServerPort",
    proxyPort: "appium:chromedriverPort",
  },
  ios: {
    driverPort: "appium:wdaLocalPort",
    mjpegServerPort: "appium:mjpegServerPort",
    proxyPort: "appium:webkitDebugProxyPort",
  },
} as const;

/** Every key Testbay sets itself, whatever the platform: one platform's port keys make no sense on the other. */
const ownedKeys: readonly string[] = testbayOwnedCapabilities;

/**
 * `appium:options` holds `appium:` capabilities without their prefix (Appium merges it into the others), so
 * `{"appium:options": {"udid": …}}` is the same as `appium:udid`: it is flattened first, or a client could set
 * through it what Testbay owns.
 */
function flattenAppiumOptions(requested: Record<string, unknown>): Record<string, unknown> {
  const { "appium:options": nested, ...rest } = requested;
  if (typeof nested !== "object" || nested === null || Array.isArray(nested)) return rest;
  const flat: Record<string, unknown> = { ...rest };
  for (const [key, value] of Object.entries(nested)) flat[`appium:${key}`] = value;
  return flat;
}

/** `http:`/`https:` URLs are downloads; anything else (a path, `file:`, another scheme) names a local file. */
function appUrlOf(app: string): URL | null {
  if (!/^https?:\/\//i.test(app)) return null;
  try {
    return new URL(app);
  } catch {
    throw new SessionNotCreatedError(`appium:app "${app}" is not a valid URL`);
  }
}

/** The refusal of an app URL whose host is not public (why: app-url-guard.ts's words). */
export function privateAppUrlRefusal(url: URL, why: string): SessionNotCreatedError {
  return new SessionNotCreatedError(
    `appium:app ${url.origin} refused: ${why}; the agent downloads only from public addresses unless started with --appium-allow-private-app-urls`,
  );
}

/** Builds Appium's new-session payload; throws SessionNotCreatedError (W3C `session not created`) with why. */
export function buildSessionCapabilities(input: SessionCapabilitiesInput): SessionCapabilities {
  const caps = flattenAppiumOptions(input.requested);
  // Testbay's own options are for the server and the agent, not for Appium, which knows no `testbay:` keys.
  for (const key of Object.keys(caps)) if (key.startsWith("testbay:")) delete caps[key];
  const overridden = ownedKeys.filter((key) => key in caps);
  for (const key of ownedKeys) delete caps[key];

  caps["appium:udid"] = input.device.serial;
  const ports = portCapabilities[input.device.platform];
  caps[ports.driverPort] = input.ports.driverPort;
  caps[ports.mjpegServerPort] = input.ports.mjpegServerPort;
  caps[ports.proxyPort] = input.ports.proxyPort;

  let appUrl: URL | null = null;
  if (input.installedAppPath !== null) {
    if ("appium:app" in caps) overridden.push("appium:app");
    caps["appium:app"] = input.installedAppPath;
  } else if ("appium:app" in caps) {
    const app = caps["appium:app"];
    if (typeof app !== "string" || app === "") {
      throw new SessionNotCreatedError(
        "appium:app must be an http(s) URL (or a registered version in testbay:options)",
      );
    }
    appUrl = appUrlOf(app);
    if (appUrl && !input.allowPrivateAppUrls) {
      const refusal = literalHostRefusal(appUrl);
      if (refusal) throw privateAppUrlRefusal(appUrl, refusal);
    }
    if (!appUrl && !input.allowLocalApps) {
      throw new SessionNotCreatedError(
        `appium:app "${app}" is a local path, a file on the agent's host that is not yours to name: use testbay:options.app and version (a registered version) or an http(s) URL, or start the agent with --appium-allow-local-apps`,
      );
    }
  }

  // Appium ends a session on its own after 60 s without a command (newCommandTimeout), before Testbay's idle
  // timeout (90 s by default) would: the agent counts idleness itself (appium-session.ts), so Appium's own
  // count is turned off unless the client asked for one.
  if (!("appium:newCommandTimeout" in caps)) caps["appium:newCommandTimeout"] = 0;

  return { payload: { capabilities: { alwaysMatch: caps, firstMatch: [{}] } }, appUrl, overridden };
}
