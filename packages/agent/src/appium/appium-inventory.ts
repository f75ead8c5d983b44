/**
 * What the agent's Appium offers, as `GET /agents` lists it (API.md §12): `appium: {version, drivers: [{name,
 * automation_name, platform_names}]}`. Read from Appium itself (`appium --version`, `appium driver list
 * --installed --json`) with the agent's APPIUM_HOME, which is where its drivers are installed.
 */
import { execFile } from "node:child_process";
import { resolveAppiumExecutable } from "./appium-server.ts";

export interface AppiumDriverInfo {
  /** The driver's name in APPIUM_HOME (`uiautomator2`, `xcuitest`, `fake`). */
  name: string;
  /** What a session's `appium:automationName` names to pick it (`UiAutomator2`, `XCUITest`). */
  automation_name: string;
  platform_names: string[];
}

export interface AppiumInventory {
  version: string;
  drivers: AppiumDriverInfo[];
}

/** Appium answers both in a few seconds; a hung one must not hold the agent's start forever. */
const COMMAND_TIMEOUT_MS = 60_000;

function run(executable: string, args: string[], env: NodeJS.ProcessEnv): Promise<string> {
  return new Promise((resolve, reject) => {
    execFile(
      executable,
      args,
      { env, timeout: COMMAND_TIMEOUT_MS, maxBuffer: 16 * 1024 * 1024, killSignal: "SIGKILL" },
      (error, stdout, stderr) => {
        if (error) {
          const detail = String(stderr).trim().split("\n").slice(-3).join(" | ") || error.message;
          reject(new Error(`${executable} ${args.join(" ")} failed: ${detail}`));
        } else resolve(String(stdout));
      },
    );
  });
}

/**
 * Turns `appium driver list --installed --json` (an object keyed by driver name, each with `automationName`,
 * `platformNames` and more) into the inventory's list, sorted by name. Entries without an automation name are
 * skipped: a session could not select them.
 */
export function driversFromList(listed: unknown): AppiumDriverInfo[] {
  if (typeof listed !== "object" || listed === null) return [];
  const drivers: AppiumDriverInfo[] = [];
  for (const [name, entry] of Object.entries(listed as Record<string, unknown>)) {
    if (typeof entry !== "object" || entry === null) continue;
    const { automationName, platformNames, installed } = entry as Record<string, unknown>;
    if (installed === false || typeof automationName !== "string") continue;
    drivers.push({
      name,
      automation_name: automationName,
      platform_names: Array.isArray(platformNames)
        ? platformNames.filter((p): p is string => typeof p === "string")
        : [],
    });
  }
  return drivers.sort((a, b) => a.name.localeCompare(b.name));
}

/** Asks Appium (the given executable, else `appium` on PATH) for its version and installed drivers. */
export async function readAppiumInventory(
  executable: string | null | undefined,
  env: NodeJS.ProcessEnv = process.env,
): Promise<AppiumInventory> {
  const appium = await resolveAppiumExecutable(executable, env.PATH ?? "");
  const [versionText, listText] = await Promise.all([
    run(appium, ["--version"], env),
    run(appium, ["driver", "list", "--installed", "--json"], env),
  ]);
  // `--version` prints the bare version; take the last line in case a warning comes first.
  const version = versionText.trim().split("\n").pop()?.trim() ?? "";
  let listed: unknown;
  try {
    listed = JSON.parse(listText);
  } catch {
    throw new Error(`${appium} driver list --installed --json did not print JSON`);
  }
  return { version, drivers: driversFromList(listed) };
}
