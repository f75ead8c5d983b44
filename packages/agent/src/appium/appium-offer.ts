/**
 * What an agent started with `--appium` offers, found out once at start: the `appium` it will run, and Appium's
 * version and drivers for `GET /agents` (API.md §12). An `appium` that cannot be found or does not answer is the
 * operator's mistake, said at start rather than at the first session; Appium without drivers is allowed (drivers
 * may be installed while the agent runs) but said too, since no session can start without one.
 */

import type { AppiumSettings } from "./appium-cli-options.ts";
import { type AppiumInventory, readAppiumInventory } from "./appium-inventory.ts";
import { resolveAppiumExecutable } from "./appium-server.ts";
import type { AppiumAgentOptions } from "./appium-step.ts";
import { PortBlocks } from "./port-blocks.ts";

export interface AppiumOffer {
  inventory: AppiumInventory;
  /** What every session of this agent runs with (appium-step.ts). */
  agentOptions: AppiumAgentOptions;
  /** Things to tell the operator that do not stop the agent. */
  warnings: string[];
}

/** Throws (AppiumStartError or Error) with a message for the operator when Appium cannot be used. */
export async function prepareAppiumOffer(
  settings: AppiumSettings,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AppiumOffer> {
  const executable = await resolveAppiumExecutable(settings.executable, env.PATH ?? "");
  const inventory = await readAppiumInventory(executable, env);
  const warnings =
    inventory.drivers.length === 0
      ? [
          `Appium ${inventory.version} has no drivers in APPIUM_HOME (${env.APPIUM_HOME ?? "~/.appium"}): sessions fail until one is installed (appium driver install uiautomator2, or xcuitest)`,
        ]
      : [];
  return {
    inventory,
    agentOptions: {
      executable,
      allowLocalApps: settings.allowLocalApps,
      allowPrivateAppUrls: settings.allowPrivateAppUrls,
      portBlocks: new PortBlocks(settings.ports),
      env,
    },
    warnings,
  };
}
