import type { FastifyInstance } from "fastify";
import { sql } from "kysely";
import type { AppOptions, AppServices } from "./app-options.ts";
import { BackgroundJobs } from "./background-jobs.ts";
import { type Clock, systemClock } from "./clock.ts";
import { type DatabaseHandle, migrateToLatest, openDatabase } from "./db/kysely.ts";
import { PostgresNotifications } from "./db/postgres-notifications.ts";
import type { Feature } from "./feature.ts";
import { createAgent, createAgentRegistry } from "./features/agent/index.ts";
import { apiIndexRoutes } from "./features/api-index/index.ts";
import { createApps } from "./features/apps/index.ts";
import { createAudit } from "./features/audit/index.ts";
import { createAuth, loadSigningKey } from "./features/auth/index.ts";
import { createClients } from "./features/clients/index.ts";
import { createDeviceRuns } from "./features/device-runs/index.ts";
import { downloadsRoutes } from "./features/downloads/index.ts";
import { createExecutions } from "./features/executions/index.ts";
import { healthRoutes } from "./features/health/health.routes.ts";
import { createLive } from "./features/live/index.ts";
import { createPeople } from "./features/people/index.ts";
import { createRateLimiting } from "./features/ratelimit/index.ts";
import { createSessions } from "./features/sessions/sessions.feature.ts";
import { createTestPlans } from "./features/testplans/index.ts";
import { createTests } from "./features/tests/index.ts";
import { createTriggers } from "./features/triggers/index.ts";
import { createVersions } from "./features/versions/index.ts";
import { webRoutes } from "./features/web/index.ts";
import { createWebhooks } from "./features/webhooks/index.ts";
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
 * Orders the features: builds each from what it needs (features/<name>/index.ts, createX) in dependency
 * order, registers their hooks and routes, starts their background work, and stops it all when the server
 * closes. What a feature is made of stays in its composition root.
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
  const rateLimiting = await createRateLimiting({ config, clock, logger, deployment: signingKey.kid });
  const store = await openBlobStore(config.storageUrl);
  const notifications =
    database.dialect === "postgres"
      ? new PostgresNotifications(config.databaseUrl, database.db, logger)
      : undefined;

  // The features, each after those it uses.
  const log = app.log;
  const audit = createAudit({ database, clock });
  const clients = createClients({
    database,
    clock,
    audit: audit.audit,
    config,
    policies: rateLimiting.policies,
  });
  const people = createPeople({
    database,
    clock,
    logger,
    config,
    audit: audit.audit,
    signingKey,
    limiter: rateLimiting.limiter,
    loginLimits: options.loginLimits,
  });
  const auth = createAuth({
    signingKey,
    config,
    clock,
    clients: clients.clients,
    sessions: people.sessions,
    rateLimiting,
  });
  const apps = createApps({ database, clock });
  const testPlans = createTestPlans({ database, clock, apps: apps.apps, audit: audit.audit });
  const tests = createTests({ database, clock, audit: audit.audit, plans: testPlans.plans });
  const live = createLive({ notifications });
  const deviceRuns = createDeviceRuns({ database });
  const agentRegistry = createAgentRegistry({ database, clock });
  const executions = createExecutions({
    database,
    clock,
    log,
    store,
    config,
    audit: audit.audit,
    changes: live.changes,
    runs: deviceRuns.runs,
    onlineAgents: agentRegistry.onlineAgents,
    quarantines: tests.quarantines,
  });
  const agent = createAgent({
    registry: agentRegistry,
    clock,
    store,
    config,
    notifications,
    runs: deviceRuns.runs,
    results: executions.results,
    logs: executions.logs,
    changes: live.changes,
    pollIntervalMs: options.claimPollIntervalMs ?? 5000,
  });
  const webhooks = createWebhooks({
    database,
    clock,
    log,
    config,
    signingKey,
    audit: audit.audit,
    executions: executions.executions,
    changes: live.changes,
    backstopMs: options.webhookBackstopMs,
  });
  // After the webhooks: an upload's version.uploaded wakes their fan-out.
  const versions = createVersions({
    database,
    clock,
    log,
    store,
    config,
    apps: apps.apps,
    onEventAppended: webhooks.wakeFanOut,
  });
  const triggers = createTriggers({
    database,
    clock,
    audit: audit.audit,
    versions: versions.versions,
    plans: testPlans.plans,
    executions: executions.executions,
    workSignal: agent.workSignal,
    changes: live.changes,
  });
  // Appium sessions (API.md §12): WebDriver sessions as executions, their commands relayed to the agents.
  const sessions = await createSessions({
    database,
    clock,
    config,
    signingKey,
    log,
    clients: clients.clients,
    tokens: auth.tokens,
    rateLimiting,
    executions: executions.executions,
    versions: versions.versions,
    runs: deviceRuns.runs,
    agents: agent.agents,
    workSignal: agent.workSignal,
    changes: live.changes,
    ...(options.channel ? { channel: options.channel } : {}),
  });
  // Once live updates and the agents' work signal listen on it.
  await notifications?.start();
  /** Started in this order, stopped in the reverse one. */
  const features: Feature[] = [
    audit,
    clients,
    people,
    auth,
    apps,
    testPlans,
    tests,
    live,
    executions,
    agent,
    webhooks,
    versions,
    triggers,
    sessions,
  ];

  const beforeClose: AppServices["beforeClose"] = [];
  app.decorate("services", {
    database,
    clients: clients.clients,
    people: people.people,
    tokens: auth.tokens,
    agents: agent.agents,
    blobs: store,
    channels: sessions.channels,
    beforeClose,
  });
  // Order matters: sessions are read from cookies, and who is calling must be known before their requests are counted.
  await people.registerHooks(app);
  auth.registerHooks(app);
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
  // In the order the OpenAPI document lists their paths (openapi-drift.test.ts compares it as text).
  const routes: Array<(app: FastifyInstance) => Promise<void>> = [
    auth.register,
    people.register,
    audit.register,
    clients.register,
    apps.register,
    versions.register,
    testPlans.register,
    triggers.register,
    executions.register,
    tests.register,
    webhooks.register,
    agent.register,
    live.register,
    sessions.register,
    agent.registerArtifactRoutes,
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
