// Where a relayed session's Appium answers directly: the agent starts one Appium per session
// (packages/agent/src/appium/appium-server.ts, appiumServerArgs) with `--port P` and `--log FILE` on its command
// line, and Appium writes the session it created into that log. The benchmark reads both to call the very same
// Appium session without Testbay in between (its baseline). Appium's own session listing (`GET
// /appium/sessions`) needs `--allow-insecure session_discovery`, which the agent never passes.
import { readdirSync, readFileSync } from "node:fs";

export interface AppiumProcess {
  pid: number;
  port: number;
  logFile: string;
}

/** Appium servers on this machine whose `--log` file is under `dir` (an agent's work dir). */
export function appiumProcessesUnder(dir: string): AppiumProcess[] {
  const found = new Map<string, AppiumProcess>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    let argv: string[];
    try {
      argv = readFileSync(`/proc/${entry}/cmdline`, "utf8").split("\0");
    } catch {
      continue; // gone meanwhile, or not ours to read
    }
    const after = (flag: string) => (argv.includes(flag) ? argv[argv.indexOf(flag) + 1] : undefined);
    const port = after("--port");
    const logFile = after("--log");
    if (!argv.includes("--base-path") || !port || !logFile?.startsWith(dir)) continue;
    // A watchdog or a shell wrapper may repeat the arguments: one entry per log file.
    found.set(logFile, { pid: Number(entry), port: Number(port), logFile });
  }
  return [...found.values()];
}

const uuid = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/gi;

/** The Appium session IDs an Appium log says were created (Appium 3 logs each as it adds it to its list). */
export function sessionsInAppiumLog(logFile: string): string[] {
  const text = readFileSync(logFile, "utf8");
  const ids = new Set<string>();
  for (const line of text.split("\n")) {
    if (!/session/i.test(line) || !/(created|added)/i.test(line)) continue;
    for (const id of line.match(uuid) ?? []) ids.add(id.toLowerCase());
  }
  return [...ids];
}
