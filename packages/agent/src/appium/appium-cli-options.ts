/**
 * The agent's Appium flags (API.md §12 "The agent side"), read from the command line into the settings the
 * Appium sessions run with: `--appium [PATH]` offers sessions (PATH: the `appium` executable, else `appium` on
 * PATH), `--appium-allow-local-apps` and `--appium-allow-private-app-urls` loosen what `appium:app` may name
 * (session-capabilities.ts, app-url-guard.ts), `--appium-ports FROM-TO` is the loopback range its sessions' port
 * blocks come from (port-blocks.ts).
 */
import { DEFAULT_PORT_RANGE, type PortRange } from "./port-blocks.ts";

export interface AppiumCliFlags {
  /** true for a bare `--appium`, the path for `--appium PATH`, undefined without it. */
  appium?: boolean | string;
  appiumAllowLocalApps?: boolean;
  appiumAllowPrivateAppUrls?: boolean;
  appiumPorts?: PortRange;
}

export interface AppiumSettings {
  /** The `appium` executable; null: `appium` on PATH. */
  executable: string | null;
  allowLocalApps: boolean;
  allowPrivateAppUrls: boolean;
  ports: PortRange;
}

/**
 * The settings, null without `--appium`; throws (a usage mistake, exit 2) when an `--appium-…` flag comes
 * without `--appium`: it would loosen nothing, and the operator believes it does something.
 */
export function appiumSettings(flags: AppiumCliFlags): AppiumSettings | null {
  if (flags.appium === undefined || flags.appium === false) {
    const orphan = [
      flags.appiumAllowLocalApps && "--appium-allow-local-apps",
      flags.appiumAllowPrivateAppUrls && "--appium-allow-private-app-urls",
      flags.appiumPorts && "--appium-ports",
    ].filter(Boolean);
    if (orphan.length > 0)
      throw new Error(
        `${orphan.join(" and ")} need --appium (the agent offers no Appium sessions without it)`,
      );
    return null;
  }
  return {
    executable: typeof flags.appium === "string" ? flags.appium : null,
    allowLocalApps: flags.appiumAllowLocalApps === true,
    allowPrivateAppUrls: flags.appiumAllowPrivateAppUrls === true,
    ports: flags.appiumPorts ?? DEFAULT_PORT_RANGE,
  };
}

/** One line for the agent's log at start: what it offers, so an operator sees the loosened rules. */
export function describeAppiumSettings(settings: AppiumSettings): string {
  const loosened = [
    settings.allowLocalApps && "local app paths allowed",
    settings.allowPrivateAppUrls && "private app URLs allowed",
  ].filter(Boolean);
  return `appium: ${settings.executable ?? "appium on PATH"}, ports ${settings.ports.from}-${settings.ports.to}${
    loosened.length > 0 ? `, ${loosened.join(", ")}` : ""
  }`;
}
