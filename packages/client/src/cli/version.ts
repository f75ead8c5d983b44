import { readFileSync } from "node:fs";

/** Set by the bundler for the one-file CLI (esbuild `define`), which has no package.json beside it. */
declare const TESTBAY_CLI_VERSION: string | undefined;

/**
 * The version a package.json names, "unknown" when it cannot be read: the CLI's and the agent's
 * (packages/agent/src/cli/version.ts), each from its own package root.
 */
export function packageVersion(packageJson: URL): string {
  try {
    const pkg = JSON.parse(readFileSync(packageJson, "utf8")) as { version?: unknown };
    return typeof pkg.version === "string" ? pkg.version : "unknown";
  } catch {
    return "unknown";
  }
}

/**
 * The CLI's version: the bundler's constant, else the version in the package.json two levels up (the package
 * root both from src/cli/ in this repository and from dist/cli/ in an installed tarball).
 */
export function cliVersion(): string {
  if (typeof TESTBAY_CLI_VERSION === "string") return TESTBAY_CLI_VERSION;
  return packageVersion(new URL("../../package.json", import.meta.url));
}
