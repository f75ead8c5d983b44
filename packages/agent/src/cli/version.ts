import { readFileSync } from "node:fs";

/**
 * The agent's version: the one in the package.json two levels up (the package root both from src/cli/ in this
 * repository and from dist/cli/ in an installed testbay-agent.tgz, which scripts/build.ts stamps with the
 * server's version), as packages/client/src/cli/version.ts reads the CLI's.
 */
export function agentVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(new URL("../../package.json", import.meta.url), "utf8")) as {
      version?: unknown;
    };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}
