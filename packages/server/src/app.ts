import path from "node:path";
import type { TypeBoxTypeProvider } from "@fastify/type-provider-typebox";
import Fastify, { type FastifyInstance } from "fastify";
import { sql } from "kysely";
import type { DestinationStream } from "pino";
import { type Clock, isoTime, systemClock } from "./clock.ts";
import type { Config } from "./config.ts";
import { type DatabaseHandle, migrateToLatest, openDatabase } from "./db/kysely.ts";
import { PostgresNotifications } from "./db/postgres-notifications.ts";
import { ApiError } from "./errors.ts";
import {
  AgentService,
  AgentsRepo,
  agentArtifactRoutes,
  agentRoutes,
  LocalWorkSignal,
  PostgresWorkSignal,
  type WorkSignal,
} from "./features/agent/index.ts";
import { apiIndexRoutes } from "./features/api-index/index.ts";
import { AppsRepo, AppsService, appsRoutes } from "./features/apps/index.ts";
import { AuditLog, auditRoutes } from "./features/audit/index.ts";
import { authRoutes, loadSigningKey, registerAuthentication, TokenService } from "./features/auth/index.ts";
import { ClientsRepo, ClientsService, clientsRoutes } from "./features/clients/index.ts";
import { DeviceRuns } from "./features/device-runs/index.ts";
import { downloadsRoutes } from "./features/downloads/index.ts";
import {
  ExecutionsRepo,
  ExecutionsService,
  executionsRoutes,
  LogStore,
  ResultsRepo,
  resultsRoutes,
} from "./features/executions/index.ts";
import { healthRoutes, type ReadinessCheck } from "./features/health/health.routes.ts";
import { ExecutionChanges, eventsRoutes, postgresExecutionChanges } from "./features/live/index.ts";
import {
  CookieSessionAuthentication,
  defaultLoginLimits,
  type LoginLimitSettings,
  OidcSignIn,
  OidcStateSealer,
  oidcRoutes,
  PeopleRepo,
  PeopleService,
  peopleRoutes,
  registerCookieCodec,
  registerHttpsProxyWarning,
} from "./features/people/index.ts";
import {
  connectRedisRateLimiter,
  MemoryRateLimiter,
  policiesFrom,
  type RateLimiter,
  registerRateLimiting,
} from "./features/ratelimit/index.ts";
import { TestPlansRepo, TestPlansService, testPlansRoutes } from "./features/testplans/index.ts";
import {
  QuarantineRepo,
  QuarantineService,
  quarantineRoutes,
  TestHistoryRepo,
  TestHistoryService,
  testsRoutes,
} from "./features/tests/index.ts";
import { IdempotencyStore, TriggersService, triggersRoutes } from "./features/triggers/index.ts";
import {
  TestPackagesRepo,
  TestPackagesService,
  testPackagesRoutes,
  VersionsRepo,
  VersionsService,
  versionsRoutes,
} from "./features/versions/index.ts";
import { webRoutes } from "./features/web/index.ts";
import {
  AttemptSender,
  CoalescedRound,
  DeliveryWorker,
  fanOutBackstopMs,
  fanOutWakeGapMs,
  SecretBox,
  sendBackstopMs,
  systemResolveAll,
  WebhookFanOut,
  WebhooksRepo,
  WebhooksService,
  webhooksRoutes,
} from "./features/webhooks/index.ts";
import { makeDataDirPrivate, warnOfRestrictedPaths } from "./fs-permissions.ts";
import { registerApiReference } from "./http/api-reference.ts";
import { registerBodyIdleTimeout } from "./http/body-idle-timeout.ts";
import { answerClientError } from "./http/client-errors.ts";
import { registerErrorHandling, sendProblem } from "./http/error-handler.ts";
import { registerExpectContinue } from "./http/expect-continue.ts";
import "./http/fastify-types.ts";
import { createLogger, stdoutDestination } from "./http/logging.ts";
import { registerOpenApi } from "./http/openapi.ts";
import { problemsRoutes } from "./http/problems.routes.ts";
import { registerUnstorableTextCheck } from "./http/refuse-unstorable-text.ts";
import { requestIdFor } from "./http/request-id.ts";
import { RequestLogController } from "./http/request-log.ts";
import { registerValidation } from "./http/validation.ts";
import { type BlobStore, openBlobStore } from "./storage/index.ts";

export interface AppOptions {
  config: Config;
  /** Time source for tokens and rate limits; tests pass a ManualClock. */
  clock?: Clock;
  /** Where logs go (stdout by default); tests capture them to check that no secret is logged. */
  logDestination?: DestinationStream;
  /** How often a waiting claim looks again without a wake-up (5 s); tests lengthen it to prove wake-ups. */
  claimPollIntervalMs?: number;
  /** The webhooks' backstop polls (fanOutBackstopMs, sendBackstopMs); tests lengthen them to prove wake-ups. */
  webhookBackstopMs?: { fanOut?: number; send?: number };
  /** Failed sign-ins allowed per account and per address (10 and 30 in 15 minutes). */
  loginLimits?: LoginLimitSettings;
}

export interface AppServices {
  database: DatabaseHandle;
  clients: ClientsService;
  people: PeopleService;
  tokens: TokenService;
  agents: AgentService;
  blobs: BlobStore;
  /**
   * Run first when the server closes, while it still answers: what runs beside it and talks to it over
   * HTTP (the local agent) stops here. Hooks cannot be added once the server listens; this list can.
   */
  beforeClose: Array<() => Promise<void>>;
}

declare module "fastify" {
  interface FastifyInstance {
    services: AppServices;
  }
}

/** JSON bodies are small (plans, triggers); binaries have their own streaming endpoint. */
const jsonBodyLimit = 1024 * 1024;

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

async function assemble(
  options: AppOptions,
  clock: Clock,
  database: DatabaseHandle,
): Promise<FastifyInstance> {
  const { config } = options;
  const logger = createLogger(config.logLevel, options.logDestination ?? stdoutDestination(config.logFormat));
  // The data dir holds secrets and binaries: 0700, every file 0600, whatever an earlier run or umask left.
  warnOfRestrictedPaths(logger, [...database.restrictedPaths, ...(await makeDataDirPrivate(config.dataDir))]);
  const signingKey = await loadSigningKey(database.db, config.signingKey, clock);
  const audit = new AuditLog(database.db, clock);
  const clients = new ClientsService(new ClientsRepo(database.db), clock, audit);
  const tokens = new TokenService(signingKey, config.audience, clock);
  const people = new PeopleService(new PeopleRepo(database.db), clock, audit);
  const cookieSessions = new CookieSessionAuthentication(people, clock, config.publicUrl);
  // With several instances the buckets must be shared (Redis); one instance keeps them in memory.
  const redisLimiter = config.redisUrl
    ? await connectRedisRateLimiter({
        url: config.redisUrl,
        clock,
        logger: logger.child({ component: "rate_limiter" }),
      })
    : undefined;
  const limiter: RateLimiter = redisLimiter ?? new MemoryRateLimiter(clock);
  const policies = policiesFrom(config);
  const store = await openBlobStore(config.storageUrl);
  const apps = new AppsService(new AppsRepo(database.db), clock);
  const plans = new TestPlansService(new TestPlansRepo(database.db), apps, clock, audit);
  const testPackagesRepo = new TestPackagesRepo(database.db);
  // The webhook fan-out is made further down; an upload wakes it through this once it exists.
  let wakeWebhookFanOut = () => {};
  const versions = new VersionsService({
    onEventAppended: () => wakeWebhookFanOut(),
    repo: new VersionsRepo(database.db),
    testPackages: testPackagesRepo,
    apps,
    store,
    clock,
    stagingDir: path.join(config.dataDir, "tmp", "uploads"),
    maxUploadBytes: config.maxUploadBytes,
    bodyIdleTimeoutMs: config.bodyIdleTimeoutSeconds * 1000,
  });
  const testPackages = new TestPackagesService({
    repo: testPackagesRepo,
    versions,
    store,
    clock,
    stagingDir: path.join(config.dataDir, "tmp", "uploads"),
    maxUploadBytes: config.maxUploadBytes,
    bodyIdleTimeoutMs: config.bodyIdleTimeoutSeconds * 1000,
  });
  const results = new ResultsRepo(database.db);
  const logs = new LogStore({
    db: database.db,
    store,
    stagingDir: path.join(config.dataDir, "tmp", "logs"),
    maxExecutionBytes: config.maxExecutionLogBytes,
  });
  const executionsRepo = new ExecutionsRepo(database.db, results);
  const deviceRuns = new DeviceRuns(database.db, database.dialect);
  const agentsSeen = new AgentsRepo(database.db);
  // Several API instances share one PostgreSQL database: what one instance announces (new work for agents, a
  // changed execution for dashboards) reaches the others through it. One process on SQLite keeps it in memory.
  const notifications =
    database.dialect === "postgres"
      ? new PostgresNotifications(config.databaseUrl, database.db, logger)
      : undefined;
  const workSignal: WorkSignal = notifications
    ? new PostgresWorkSignal(notifications)
    : new LocalWorkSignal();
  const changes = notifications ? postgresExecutionChanges(notifications) : new ExecutionChanges();
  const executions = new ExecutionsService(
    executionsRepo,
    clock,
    async (organizationId) =>
      (await agentsSeen.list(organizationId, clock.now()))
        .filter((agent) => agent.online)
        .map((agent) => ({ stepTypes: agent.step_types, devices: agent.devices })),
    audit,
    (organizationId, executionId) => changes.changed(organizationId, executionId),
    deviceRuns,
  );
  const triggers = new TriggersService(
    versions,
    plans,
    executionsRepo,
    clock,
    (organizationId, executionIds) => {
      workSignal.notify(organizationId);
      for (const id of executionIds) changes.changed(organizationId, id);
    },
    audit,
  );
  await notifications?.start();
  const agents = new AgentService({
    runs: deviceRuns,
    seen: agentsSeen,
    results,
    logs,
    signal: workSignal,
    changes,
    store,
    clock,
    leaseTtlSeconds: config.leaseTtlSeconds,
    maxArtifactBytes: config.maxUploadBytes,
    stagingDir: path.join(config.dataDir, "tmp", "artifacts"),
    bodyIdleTimeoutMs: config.bodyIdleTimeoutSeconds * 1000,
    publicUrl: config.publicUrl,
    pollIntervalMs: options.claimPollIntervalMs ?? 5000,
  });
  const idempotency = new IdempotencyStore(database.db, clock);

  const app = Fastify({
    loggerInstance: logger,
    // request.ip and request.protocol come from X-Forwarded-For/-Proto only behind the proxies named in
    // TESTBAY_TRUSTED_PROXIES (API.md §10): anyone else could write those headers.
    trustProxy: config.trustedProxies.length > 0 ? config.trustedProxies : false,
    genReqId: requestIdFor,
    // One line per request, written when it is answered (http/request-log.ts).
    logController: new RequestLogController(logger),
    bodyLimit: jsonBodyLimit,
    // Closing with requests in flight waits for them; idle keep-alive sockets are closed at once.
    forceCloseConnections: "idle",
    return503OnClosing: true,
    clientErrorHandler: answerClientError,
    // Malformed percent-encoding in a path: answered like every other bad request.
    frameworkErrors: (_error, request, reply) =>
      sendProblem(
        request,
        reply,
        new ApiError("invalid_request", {
          detail: "The URL is not valid: it has malformed percent-encoding.",
          fix: "Percent-encode the path correctly (for example %2F for '/', %25 for '%').",
        }),
      ),
  }).withTypeProvider<TypeBoxTypeProvider>();

  // Fastify parses text/plain by default; this API takes JSON (and forms on the token endpoint) only.
  app.removeContentTypeParser("text/plain");
  const beforeClose: AppServices["beforeClose"] = [];
  app.decorate("services", { database, clients, people, tokens, agents, blobs: store, beforeClose });
  // Callback-style where there is nothing to await: these run on every request, and a promise per hook adds up.
  app.addHook("onRequest", (request, reply, done) => {
    reply.header("x-request-id", request.id);
    reply.header("x-content-type-options", "nosniff");
    done();
  });
  registerValidation(app);
  registerUnstorableTextCheck(app);
  registerErrorHandling(app, config.supportEmail);
  registerBodyIdleTimeout(app, config.bodyIdleTimeoutSeconds * 1000);
  // Order matters: who is calling must be known before their requests are counted.
  await registerCookieCodec(app);
  registerAuthentication(app, tokens, clients, cookieSessions);
  registerRateLimiting(app, limiter, policies, signingKey.kid);
  registerHttpsProxyWarning(app, logger, config.publicUrl, config.trustedProxies);
  registerExpectContinue(app);
  await registerOpenApi(app);
  await registerApiReference(app);

  const readiness: ReadinessCheck[] = [
    { name: "database", check: async () => void (await sql`select 1`.execute(database.db)) },
    { name: "storage", check: () => store.check() },
    // Without Redis the server still serves (fail open): /readyz says degraded but stays 200.
    ...(redisLimiter ? [{ name: "rate_limiter", check: () => redisLimiter.check(), degradable: true }] : []),
  ];
  await app.register(healthRoutes, { checks: readiness });
  await app.register(apiIndexRoutes, { publicUrl: config.publicUrl });
  await app.register(downloadsRoutes);
  await app.register(problemsRoutes);
  await app.register(authRoutes, {
    tokens,
    clients,
    limiter,
    policies,
    clock,
    publicUrl: config.publicUrl,
    deployment: signingKey.kid,
  });
  await app.register(peopleRoutes, {
    people,
    sessions: cookieSessions,
    limiter,
    loginLimits: options.loginLimits ?? defaultLoginLimits,
    clock,
    publicUrl: config.publicUrl,
    deployment: signingKey.kid,
    oidcEnabled: config.oidc !== undefined,
  });
  await app.register(oidcRoutes, {
    people,
    oidc: config.oidc && new OidcSignIn(config.oidc, clock),
    sealer: new OidcStateSealer(signingKey.privateKey),
    publicUrl: config.publicUrl,
  });
  await app.register(auditRoutes, { audit });
  await app.register(clientsRoutes, { clients, policies, maxUploadBytes: config.maxUploadBytes });
  await app.register(appsRoutes, { apps });
  await app.register(versionsRoutes, { versions });
  await app.register(testPackagesRoutes, { testPackages });
  await app.register(testPlansRoutes, { plans });
  await app.register(triggersRoutes, { triggers, idempotency, executions });
  await app.register(executionsRoutes, { executions });
  const quarantineRepo = new QuarantineRepo(database.db);
  const quarantines = new QuarantineService(quarantineRepo, audit, clock);
  await app.register(resultsRoutes, { executions, results, logs, store, quarantines });
  await app.register(testsRoutes, {
    history: new TestHistoryService(new TestHistoryRepo(database.db), plans, quarantineRepo),
  });
  await app.register(quarantineRoutes, { quarantines });
  // Webhooks (API.md §9): routes here; the fan-out and the sender run in the background below.
  const webhooksRepo = new WebhooksRepo(database.db, database.dialect);
  const webhookSecrets = new SecretBox(signingKey.privateKey);
  const webhookAttemptTimeoutMs = 10_000;
  const deliveryWorker = new DeliveryWorker({
    repo: webhooksRepo,
    sender: new AttemptSender({
      allowPrivate: config.webhookAllowPrivate,
      resolveAll: systemResolveAll,
      timeoutMs: webhookAttemptTimeoutMs,
    }),
    secrets: webhookSecrets,
    clock,
    retryScheduleMs: config.webhookRetryScheduleMs,
    // Well past an attempt's 10 s: a live sender never loses its delivery to another instance.
    leaseMs: webhookAttemptTimeoutMs + 50_000,
    publicUrl: config.publicUrl,
    onError: (error) => app.log.error({ err: error }, "webhook delivery round failed"),
  });
  await app.register(webhooksRoutes, {
    webhooks: new WebhooksService({
      repo: webhooksRepo,
      secrets: webhookSecrets,
      audit,
      clock,
      allowPrivate: config.webhookAllowPrivate,
      publicUrl: config.publicUrl,
      onDue: () => deliveryWorker.wake(),
    }),
  });
  const webhookFanOut = new WebhookFanOut(database.db, database.dialect, clock, async (event) => {
    // The outbox names the execution; receivers get the execution object as GET /v1/executions/{id} has it.
    if (!event.type.startsWith("execution.")) return undefined;
    const id = event.data.execution_id;
    if (typeof id !== "string") return undefined;
    try {
      return await executions.view(event.organizationId, await executions.get(event.organizationId, id));
    } catch {
      return undefined;
    }
  });
  await app.register(agentRoutes, { agents });
  await app.register(eventsRoutes, { changes });
  await app.register(agentArtifactRoutes, { agents });
  // Last: the dashboard answers the GET paths no route above has (its deep links), and only those.
  await app.register(webRoutes);
  await versions.cleanUp(app.log);
  await testPackages.cleanUp(app.log);
  await logs.startUp(app.log);
  await scheduleHourly(app, "purge deleted test plans", () => plans.purgeExpired());
  await scheduleHourly(app, "forget expired idempotency keys", () => idempotency.purgeExpired());
  await scheduleHourly(app, "delete idle sessions", () => people.purgeIdleSessions());
  await scheduleHourly(app, "forget webhook deliveries finished 30 days ago", () =>
    webhooksRepo.purgeFinishedBefore(isoTime(clock.now() - 30 * 24 * 3600 * 1000)),
  );
  const keepVersions = config.keepVersions;
  if (keepVersions !== undefined) {
    await scheduleHourly(app, "delete versions beyond TESTBAY_KEEP_VERSIONS", () =>
      versions.enforceRetention(keepVersions, app.log),
    );
  }

  // Webhooks start on a signal: a change of an execution on this instance (committed, with the events it
  // appended) fans out, and deliveries inserted start the sender. The polls are a slow backstop for what no
  // signal here announced (fanOutBackstopMs, sendBackstopMs); other instances need no wake-up.
  const fanOutRound = new CoalescedRound(
    () => webhookFanOut.drain(() => deliveryWorker.wake()),
    (error) => app.log.error({ job: "fan events out to webhooks", err: error }, "background job failed"),
    fanOutWakeGapMs,
  );
  const stopObserving = changes.observe(() => fanOutRound.wake());
  wakeWebhookFanOut = () => fanOutRound.wake();
  app.addHook("preClose", async () => {
    stopObserving();
    await fanOutRound.idle();
  });
  scheduleEvery(
    app,
    "fan events out to webhooks",
    options.webhookBackstopMs?.fanOut ?? fanOutBackstopMs,
    () => fanOutRound.run(),
  );
  scheduleEvery(app, "send due webhook deliveries", options.webhookBackstopMs?.send ?? sendBackstopMs, () =>
    deliveryWorker.tick(),
  );
  scheduleEvery(app, "re-queue runs whose agents went silent", sweepIntervalMs(config.leaseTtlSeconds), () =>
    agents.sweep(),
  );
  let closeTimers: NodeJS.Timeout[] = [];
  app.addHook("preClose", async () => {
    for (const stop of beforeClose) await stop();
    // Waiting claims answer 204 at once instead of holding the close up for up to 30 s.
    await agents.close();
    // Sends in flight are dropped unrecorded: their leases lapse and another instance (or this one, restarted)
    // sends them again. At least once, never lost.
    await deliveryWorker.close();
    changes.close();
    await notifications?.close();
    // Node closes the connections that are idle when the close begins; one busy then (a claim ending
    // right now) and idle a moment later would hold the close up for the whole keep-alive timeout. Close
    // those as they fall idle, and after 5 s whatever is left.
    closeTimers = [
      setInterval(() => app.server.closeIdleConnections(), 100),
      setTimeout(() => app.server.closeAllConnections(), 5000),
    ];
    for (const timer of closeTimers) timer.unref();
  });
  app.addHook("onClose", async () => {
    for (const timer of closeTimers) clearTimeout(timer);
    await store.close?.();
    await limiter.close();
    await database.close();
  });
  return app;
}

/** Lapsed leases are found within a quarter of their TTL (at least every second, at most every 5 s). */
function sweepIntervalMs(leaseTtlSeconds: number): number {
  return Math.min(5000, Math.max(1000, (leaseTtlSeconds * 1000) / 4));
}

/**
 * Runs a job every `intervalMs` while the server runs, never two at once. The job is safe to run on
 * several instances; a failure is logged and the next round tries again.
 */
function scheduleEvery(app: FastifyInstance, name: string, intervalMs: number, job: () => Promise<unknown>) {
  let running = false;
  const timer = setInterval(() => {
    if (running) return;
    running = true;
    job()
      .catch((error) => app.log.error({ job: name, err: error }, "background job failed"))
      .finally(() => {
        running = false;
      });
  }, intervalMs);
  timer.unref();
  app.addHook("onClose", async () => clearInterval(timer));
}

/**
 * Runs a housekeeping job now and every hour while the server runs. Jobs are idempotent, so several
 * instances running them is harmless; a failure is logged and retried at the next hour.
 */
async function scheduleHourly(
  app: FastifyInstance,
  name: string,
  job: () => Promise<unknown>,
): Promise<void> {
  const run = () =>
    job().then(
      (result) => app.log.debug({ job: name, result }, "housekeeping done"),
      (error) => app.log.error({ job: name, err: error }, "housekeeping failed"),
    );
  await run();
  const timer = setInterval(run, 3600 * 1000);
  timer.unref();
  app.addHook("onClose", async () => clearInterval(timer));
}
