import type { FastifyInstance } from "fastify";
import type { DestinationStream } from "pino";
import { buildApp } from "./app.ts";
import type { Config } from "./config.ts";
import { startLocalAgent } from "./features/agent/index.ts";
import {
  bootstrapDefaultOrganization,
  nameFirstStartClients,
  pointCredentialsAt,
} from "./features/clients/index.ts";
import { flushLogsSync } from "./http/logging.ts";

export interface RunningServer {
  app: FastifyInstance;
  /** The `…/v1` base URL clients use. */
  baseUrl: string;
  /** The dashboard's address: the base URL without its `v1` (`http://HOST:PORT/`), to open in a browser. */
  dashboardUrl: string;
  credentialsFile: string | undefined;
}

/** The base URL to hand out: the configured public one, or this host and port (a wildcard host as loopback). */
function baseUrlFor(config: Config, port: number): string {
  if (config.publicUrl) return config.publicUrl;
  const host = ["0.0.0.0", "::", "[::]"].includes(config.host) ? "127.0.0.1" : config.host;
  const shown = host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
  return `http://${shown}:${port}/v1`;
}

/** Where this process reaches itself: loopback when it listens on every interface. */
function loopbackHost(host: string): string {
  if (["0.0.0.0", "::", "[::]"].includes(host)) return "127.0.0.1";
  return host.includes(":") && !host.startsWith("[") ? `[${host}]` : host;
}

export interface StartOptions {
  /** Where the log goes; unset, stdout as the configuration says (http/logging.ts). Tests read it. */
  logDestination?: DestinationStream | undefined;
}

/** Builds the app, listens, and on an empty embedded store creates the default organization and its clients. */
export async function startServer(config: Config, options: StartOptions = {}): Promise<RunningServer> {
  const app = await buildApp(
    options.logDestination ? { config, logDestination: options.logDestination } : { config },
  );
  try {
    await app.listen({ port: config.port, host: config.host });
  } catch (error) {
    await app.close();
    throw error;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : config.port;
  const baseUrl = baseUrlFor(config, port);
  const credentialsFile =
    app.services.database.dialect === "sqlite"
      ? await bootstrapDefaultOrganization(app.services.clients, {
          dataDir: config.dataDir,
          audience: config.audience,
          baseUrl,
          createFirstAdmin: () => app.services.people.createFirstAdmin(),
        })
      : undefined;
  // A store whose first start came before clients had names: name its first clients now (bootstrap.ts).
  if (!credentialsFile) await nameFirstStartClients(app.services.clients, config.dataDir);
  if (!credentialsFile && app.services.database.dialect === "sqlite")
    await pointCredentialsAt(config.dataDir, baseUrl);
  if (config.localAgent) {
    await startLocalAgent(
      app,
      config,
      app.services.clients,
      `http://${loopbackHost(config.host)}:${port}/v1`,
    );
  }
  return { app, baseUrl, dashboardUrl: baseUrl.replace(/v1$/, ""), credentialsFile };
}

/**
 * Stops taking requests on SIGTERM/SIGINT, lets those in flight finish, then exits, with every buffered log
 * line written out first (the logger writes asynchronously; see http/logging.ts).
 */
export function closeOnSignals(app: FastifyInstance): void {
  let closing = false;
  const exit = (code: number) => {
    flushLogsSync(app.log);
    process.exit(code);
  };
  for (const signal of ["SIGTERM", "SIGINT"] as const) {
    process.once(signal, () => {
      if (closing) return;
      closing = true;
      app.log.info({ signal }, "shutting down");
      // Said in the log before exiting 1, so a close that hangs or fails shows why (the JSON log tail a test
      // prints when start does not exit 0: test/cli-harness.ts).
      const force = setTimeout(() => {
        app.log.error("shutting down took over 10 s (something did not stop); exiting");
        exit(1);
      }, 10_000);
      force.unref();
      app.close().then(
        () => exit(0),
        (error: unknown) => {
          app.log.error({ err: error }, "shutting down failed; exiting");
          exit(1);
        },
      );
    });
  }
}

/**
 * On a crash (an exception nothing caught, or a rejected promise nothing handled, which Node turns into one)
 * the error is logged at `fatal`, which writes out the log buffer synchronously with it, so the lines
 * leading up to the crash are not lost; then the process exits with 1, as Node's default would.
 */
export function logCrashes(app: FastifyInstance): void {
  process.on("uncaughtException", (error, origin) => {
    app.log.fatal({ err: error, origin }, "crashed: an error nothing handled; exiting");
    flushLogsSync(app.log);
    process.exit(1);
  });
}
