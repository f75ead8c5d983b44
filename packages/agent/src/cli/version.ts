import { packageVersion } from "@testbay/client";

/**
 * The agent's version: the one in the package.json two levels up (the package root both from src/cli/ in this
 * repository and from dist/cli/ in an installed testbay-agent.tgz, which scripts/build.ts stamps with the
 * server's version), read as packages/client/src/cli/version.ts reads the CLI's.
 */
export function agentVersion(): string {
  return packageVersion(new URL("../../package.json", import.meta.url));
}
