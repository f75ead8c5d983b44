import { UsageError } from "./exit-codes.ts";

/** What every command needs to reach the service, from TESTBAY_* variables overridden by flags. */
export interface CliConfig {
  baseUrl: string;
  clientId: string | undefined;
  clientSecret: string | undefined;
  audience: string;
  token: string | undefined;
}

export interface ConnectionFlags {
  url?: string;
  clientId?: string;
  clientSecret?: string;
  audience?: string;
  token?: string;
}

const nonEmpty = (value: string | undefined) => (value?.trim() ? value.trim() : undefined);

/**
 * Resolves the connection settings (CLIENT.md "Configuration"). A token (TESTBAY_TOKEN or --token) wins over
 * client credentials: it was obtained earlier in the same pipeline run, so no token call is made.
 */
export function resolveConfig(
  flags: ConnectionFlags,
  env: Record<string, string | undefined>,
  needs: { auth: boolean } = { auth: true },
): CliConfig {
  const url = nonEmpty(flags.url) ?? nonEmpty(env.TESTBAY_URL);
  if (!url) {
    throw new UsageError(
      "No service URL: set TESTBAY_URL (or pass --url) to the API base URL, e.g. http://127.0.0.1:8080/v1.",
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new UsageError(
      `TESTBAY_URL "${url}" is not a URL: use the API base URL, e.g. http://127.0.0.1:8080/v1.`,
    );
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    throw new UsageError(`TESTBAY_URL "${url}" must be an http:// or https:// URL.`);
  }
  const config: CliConfig = {
    baseUrl: url.replace(/\/+$/, ""),
    clientId: nonEmpty(flags.clientId) ?? nonEmpty(env.TESTBAY_CLIENT_ID),
    clientSecret: nonEmpty(flags.clientSecret) ?? nonEmpty(env.TESTBAY_CLIENT_SECRET),
    audience: nonEmpty(flags.audience) ?? nonEmpty(env.TESTBAY_AUDIENCE) ?? "testbay",
    token: nonEmpty(flags.token) ?? nonEmpty(env.TESTBAY_TOKEN),
  };
  if (needs.auth && !config.token && !(config.clientId && config.clientSecret)) {
    const missing = !config.clientId ? "TESTBAY_CLIENT_ID" : "TESTBAY_CLIENT_SECRET";
    throw new UsageError(
      `No credentials: ${missing} is not set. Set TESTBAY_CLIENT_ID and TESTBAY_CLIENT_SECRET (or pass --client-id and --client-secret), or TESTBAY_TOKEN to a token from \`testbay token\`.`,
    );
  }
  return config;
}
