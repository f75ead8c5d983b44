/**
 * `shell` steps on a device of an agent started with `--appium` (API.md §12 "The agent side"; issue 27): an Appium
 * server is started for the step's device, on one of the agent's port blocks, for the step's duration, and the step
 * gets `TESTBAY_APPIUM_URL` (that server) and `TESTBAY_APPIUM_CAPABILITIES` (a JSON object naming the device:
 * platformName, appium:udid, appium:automationName when a driver in APPIUM_HOME is known for the platform, and the
 * block's driver ports), so a suite already written for Appium runs on the device host as a plan step. Appium's
 * log is kept as the artifact `appium-step-<n>.log`.
 *
 * An Appium that does not start is said in the step's log and the step runs without the two variables: a script
 * that does not use Appium must not fail because of it.
 */
import path from "node:path";
import type { AppiumDriverInfo } from "../appium/appium-inventory.ts";
import { type AppiumServer, startAppiumServer } from "../appium/appium-server.ts";
import type { AppiumAgentOptions } from "../appium/appium-step.ts";
import type { PortBlock } from "../appium/port-blocks.ts";
import { buildSessionCapabilities } from "../appium/session-capabilities.ts";
import type { Device } from "../steps/step-types.ts";

export interface ShellAppium {
  agent: AppiumAgentOptions;
  drivers: readonly AppiumDriverInfo[];
}

const platformName = { android: "Android", ios: "iOS" } as const;

/** What a script's Appium client asks for to reach this device (no app: the script names its own). */
export function shellStepCapabilities(
  device: Pick<Device, "serial" | "platform">,
  ports: Pick<PortBlock, "driverPort" | "mjpegServerPort" | "proxyPort">,
  drivers: readonly AppiumDriverInfo[],
): Record<string, unknown> {
  const name = platformName[device.platform];
  const driver = drivers.find((d) => d.platform_names.some((p) => p.toLowerCase() === name.toLowerCase()));
  const requested: Record<string, unknown> = {
    platformName: name,
    ...(driver ? { "appium:automationName": driver.automation_name } : {}),
  };
  const built = buildSessionCapabilities({
    requested,
    device,
    ports,
    installedAppPath: null,
    allowLocalApps: false,
    allowPrivateAppUrls: false,
  });
  // Appium's own idle count is the script's business here (the session-wide default is Testbay's, not a step's).
  const { "appium:newCommandTimeout": _ownIdle, ...capabilities } = built.payload.capabilities.alwaysMatch;
  return capabilities;
}

/**
 * Runs `step` with the two variables when Appium started for `device`, else without them; Appium is stopped and
 * its ports given back when the step is over.
 */
export async function withShellAppium<T>(
  appium: ShellAppium,
  device: Pick<Device, "serial" | "platform">,
  where: { artifactsDir: string; stepNumber: number; log(line: string): void },
  step: (env: Record<string, string>) => Promise<T>,
): Promise<T> {
  let block: (PortBlock & { release(): void }) | undefined;
  let server: AppiumServer | undefined;
  try {
    block = await appium.agent.portBlocks.reserve();
    server = await startAppiumServer({
      executable: appium.agent.executable,
      env: appium.agent.env,
      startTimeoutMs: appium.agent.startTimeoutMs,
      stopGraceMs: appium.agent.stopGraceMs,
      port: block.appiumPort,
      logFile: path.join(where.artifactsDir, `appium-step-${where.stepNumber}.log`),
    });
  } catch (error) {
    block?.release();
    where.log(`Appium did not start for this step (no TESTBAY_APPIUM_URL): ${(error as Error).message}`);
    return step({});
  }
  try {
    where.log(`Appium for ${device.serial} at ${server.url} (TESTBAY_APPIUM_URL) for this step`);
    return await step({
      TESTBAY_APPIUM_URL: server.url,
      TESTBAY_APPIUM_CAPABILITIES: JSON.stringify(shellStepCapabilities(device, block, appium.drivers)),
    });
  } finally {
    await server.stop();
    block.release();
  }
}
