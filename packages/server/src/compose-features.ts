import type { FastifyBaseLogger } from "fastify";
import type { AppOptions } from "./app-options.ts";
import type { Clock } from "./clock.ts";
import type { DatabaseHandle } from "./db/kysely.ts";
import type { PostgresNotifications } from "./db/postgres-notifications.ts";
import type { Feature } from "./feature.ts";
import { createAgent, createAgentRegistry } from "./features/agent/index.ts";
import { createApps } from "./features/apps/index.ts";
import { createAudit } from "./features/audit/index.ts";
import { createAuth, type SigningKey } from "./features/auth/index.ts";
import { createClients } from "./features/clients/index.ts";
import { createDeviceRuns } from "./features/device-runs/index.ts";
import { createExecutions } from "./features/executions/index.ts";
import { createFailures } from "./features/failures/index.ts";
import { createLive } from "./features/live/index.ts";
import { createMetrics } from "./features/metrics/index.ts";
import { createPeople } from "./features/people/index.ts";
import type { createRateLimiting } from "./features/ratelimit/index.ts";
import { createReports } from "./features/reports/index.ts";
import { createSchedules } from "./features/schedules/index.ts";
import { createSessions } from "./features/sessions/sessions.feature.ts";
import { createTestPlans } from "./features/testplans/index.ts";
import { createTests } from "./features/tests/index.ts";
import { createTriggers } from "./features/triggers/index.ts";
import { createVersions } from "./features/versions/index.ts";
import { createWebhooks } from "./features/webhooks/index.ts";
import type { BlobStore } from "./storage/index.ts";

/** What every feature may use, made by app.ts before any of them. */
export interface SharedParts {
  options: AppOptions;
  clock: Clock;
  database: DatabaseHandle;
  /** The server's logger as made (people's HTTPS proxy warning), and app.log, which features log through. */
  logger: FastifyBaseLogger;
  log: FastifyBaseLogger;
  signingKey: SigningKey;
  rateLimiting: Awaited<ReturnType<typeof createRateLimiting>>;
  store: BlobStore;
  /** With several API instances on one PostgreSQL database; none on SQLite. */
  notifications: PostgresNotifications | undefined;
}

/**
 * Builds the server's features, each after those it uses, from their composition roots
 * (features/<name>/<name>.feature.ts). Which feature needs which is written here and only here; app.ts registers
 * and starts what this returns.
 */
export async function composeFeatures(shared: SharedParts) {
  const { options, clock, database, logger, log, signingKey, rateLimiting, store, notifications } = shared;
  const { config } = options;
  // First: the features below count what they do through its meters (API.md §15; none without TESTBAY_METRICS).
  const metrics = createMetrics({ database, clock, config });
  const { meters } = metrics;
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
  // Failure groups and trends (API.md §16): read from the test cases device-runs stores.
  const failures = createFailures({ database, clock, plans: testPlans.plans });
  const live = createLive({ notifications });
  const deviceRuns = createDeviceRuns({ database, meters });
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
  // The report to share and CTRF (API.md §16): read from the executions' results.
  const reports = createReports({
    database,
    clock,
    store,
    executions: executions.executions,
    results: executions.results,
    quarantines: tests.quarantines,
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
    meters,
  });
  // After the webhooks: an upload's version.uploaded wakes their fan-out.
  const versions = createVersions({
    database,
    clock,
    log,
    // Uploads end in the store: counted there (testbay_upload_bytes_total).
    store: metrics.countUploads(store),
    config,
    apps: apps.apps,
    onEventAppended: webhooks.wakeFanOut,
  });
  // After the versions: its jobs list the version's files (API.md §14).
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
    versionFiles: versions.files,
    pollIntervalMs: options.claimPollIntervalMs ?? 5000,
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
  // Scheduled runs (API.md §15): queued through the triggers, on the versions and branches' runs they name.
  const schedules = createSchedules({
    database,
    clock,
    log,
    plans: testPlans.plans,
    versions: versions.versions,
    executions: executions.executions,
    triggers: triggers.triggers,
    tickMs: config.schedulesTickMs,
    audit: audit.audit,
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
  // Listed in start order (each after those it uses); stopped in the reverse one.
  const features = {
    audit,
    clients,
    people,
    auth,
    apps,
    testPlans,
    tests,
    failures,
    live,
    executions,
    reports,
    agent,
    webhooks,
    versions,
    triggers,
    schedules,
    sessions,
  };
  const inStartOrder: Feature[] = Object.values(features);
  // Metrics has no background work: app.ts registers its request hook and route itself.
  return { ...features, metrics, inStartOrder };
}
