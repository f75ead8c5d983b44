import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import type { AppOptions, AppServices } from "./app-options.ts";
import { BackgroundJobs } from "./background-jobs.ts";
import { type Clock, systemClock } from "./clock.ts";
import { composeFeatures } from "./compose-features.ts";
import { type DatabaseHandle, migrateToLatest, openDatabase } from "./db/kysely.ts";
import { PostgresNotifications } from "./db/postgres-notifications.ts";
import { apiIndexRoutes } from "./features/api-index/index.ts";
import { loadSigningKey } from "./features/auth/index.ts";
import { downloadsRoutes } from "./features/downloads/index.ts";
import { healthRoutes } from "./features/health/health.routes.ts";
import { createRateLimiting } from "./features/ratelimit/index.ts";
import { webRoutes } from "./features/web/index.ts";
import { makeDataDirPrivate, warnOfRestrictedPaths } from "./fs-permissions.ts";
import { registerApiReference } from "./http/api-reference.ts";
import { createHttpServer } from "./http/create-server.ts";
import { registerExpectContinue } from "./http/expect-continue.ts";
import { closeInOrder } from "./server-lifecycle.ts";
import "./http/fastify-types.ts";
import { createLogger, stdoutDestination } from "./http/logging.ts";
import { registerOpenApi } from "./http/openapi.ts";
import { problemsRoutes } from "./http/problems.routes.ts";
import { openBlobStore } from "./storage/index.ts";

/**
 * Builds the whole server: opens and migrates the database, loads the signing key and registers every
 * feature. It never listens; `main.ts` does, and tests listen on port 0.
 */
export async function buildApp(options: AppOptions): Promise<FastifyInstance> {
  const { config } = options;
  const clock = options.clock ?? systemClock;
  const database = openDatabase(config.databaseUrl);
  try {
    await migrateToLatest(database.db);
    return await assemble(options, clock, database);
  } catch (error) {
    await database.close();
    throw error;
  }
}

/**
 * Makes what every feature shares, has the features built (compose-features.ts), registers their hooks and
 * routes in order, starts their background work, and stops it all when the server closes. What a feature is
 * made of stays in its composition root.
 */
async function assemble(
  options: AppOptions,
  clock: Clock,
  database: DatabaseHandle,
): Promise<FastifyInstance> {
  const { config } = options;
  const logger = createLogger(config.logLevel, options.logDestination ?? stdoutDestination(config.logFormat));
  // The data dir holds secrets and binaries: 0700, every file 0600, whatever an earlier run or umask left.
  warnOfRestrictedPaths(logger, [...database.restrictedPaths, ...(await makeDataDirPrivate(config.dataDir))]);
  // Used by several features: tokens, rate limit keys, sign-in state, webhook secrets.
  const signingKey = await loadSigningKey(database.db, config.signingKey, clock);
  const app = createHttpServer(config, logger);
  const jobs = new BackgroundJobs(app.log);

  // What every feature may use: rate limits, the blob store, and with several API instances on one PostgreSQL
  // database its notifications (what one instance announces, new work for agents or a changed execution for
  // dashboards, reaches the others through them; one process on SQLite keeps it in memory).
  const rateLimiting = await createRateLimiting({
    config,
    clock,
    logger,
    deployment: signingKey.kid,
    keySlackMs: options.rateLimitKeySlackMs,
  });
  const store = await openBlobStore(config.storageUrl);
  const notifications =
    database.dialect === "postgres"
      ? new PostgresNotifications(config.databaseUrl, database.db, logger)
      : undefined;

  const built = await composeFeatures({
    options,
    clock,
    database,
    logger,
    log: app.log,
    signingKey,
    rateLimiting,
    store,
    notifications,
  });
  // Once live updates and the agents' work signal listen on it.
  await notifications?.start();
  const features = built.inStartOrder;

  const beforeClose: AppServices["beforeClose"] = [];
  app.decorate("services", {
    database,
    clients: built.clients.clients,
    people: built.people.people,
    tokens: built.auth.tokens,
    agents: built.agent.agents,
    blobs: store,
    channels: built.sessions.channels,
    beforeClose,
  });
  // Order matters: sessions are read from cookies, and who is calling must be known before their requests are counted.
  // First: every response is counted and timed, those refused by the hooks below too (API.md §15).
  built.metrics.registerHooks(app);
  await built.people.registerHooks(app);
  built.auth.registerHooks(app);
  rateLimiting.registerHooks(app);
  registerExpectContinue(app);
  await registerOpenApi(app);
  await registerApiReference(app);

  await app.register(healthRoutes, {
    checks: [
      { name: "database", check: async () => void (await sql`select 1`.execute(database.db)) },
      { name: "storage", check: () => store.check() },
      ...rateLimiting.readiness,
    ],
  });
  await app.register(apiIndexRoutes, { publicUrl: config.publicUrl });
  await app.register(downloadsRoutes);
  await app.register(problemsRoutes);
  // GET /metrics when TESTBAY_METRICS is set: outside /v1 like the probes, not in the OpenAPI document.
  await built.metrics.register(app);
  // In the order the OpenAPI document lists their paths (openapi-drift.test.ts compares it as text).
  const routes: Array<(app: FastifyInstance) => Promise<void>> = [
    built.auth.register,
    built.people.register,
    built.audit.register,
    built.clients.register,
    built.apps.register,
    built.versions.register,
    built.testPlans.register,
    built.schedules.register,
    built.triggers.register,
    built.executions.register,
    built.reports.register,
    built.tests.register,
    built.failures.register,
    built.webhooks.register,
    built.agent.register,
    built.live.register,
    built.sessions.register,
    built.agent.registerArtifactRoutes,
  ];
  for (const register of routes) await register(app);
  // Last: the dashboard answers the GET paths no route above has (its deep links), and only those.
  await app.register(webRoutes);

  for (const feature of features) await feature.start?.(jobs);
  closeInOrder(app, {
    beforeClose,
    features,
    closeNotifications: async () => await notifications?.close(),
    jobs,
    resources: [() => store.close?.(), () => rateLimiting.close(), () => database.close()],
  });
  return app;
}
