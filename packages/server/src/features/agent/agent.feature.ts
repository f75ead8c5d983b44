import path from "node:path";
import type { FastifyInstance } from "fastify";
import type { BackgroundJobs } from "../../background-jobs.ts";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { PostgresNotifications } from "../../db/postgres-notifications.ts";
import type { BlobStore } from "../../storage/index.ts";
import type { DeviceRuns } from "../device-runs/index.ts";
import type { LogStore, ResultsRepo } from "../executions/index.ts";
import type { ExecutionChanges } from "../live/index.ts";
import type { VersionFilesService } from "../versions/index.ts";
import { agentArtifactRoutes, agentRoutes } from "./agent.routes.ts";
import { AgentService } from "./agent.service.ts";
import { AgentsRepo } from "./agents.repo.ts";
import { PostgresWorkSignal } from "./postgres-work-signal.ts";
import { LocalWorkSignal, type WorkSignal } from "./work-signal.ts";

/**
 * The agents seen by their claims and heartbeats. Built before executions, which say why a queued execution
 * waits from the online agents, and before the agent protocol, which writes into executions' results.
 */
export function createAgentRegistry({ database, clock }: { database: DatabaseHandle; clock: Clock }) {
  const seen = new AgentsRepo(database.db);
  return {
    seen,
    onlineAgents: async (organizationId: string) =>
      (await seen.list(organizationId, clock.now()))
        .filter((agent) => agent.online)
        .map((agent) => ({ stepTypes: agent.step_types, devices: agent.devices })),
  };
}

export interface AgentDeps {
  registry: { seen: AgentsRepo };
  clock: Clock;
  store: BlobStore;
  config: Pick<
    Config,
    "dataDir" | "leaseTtlSeconds" | "maxUploadBytes" | "bodyIdleTimeoutSeconds" | "publicUrl"
  >;
  /** Several instances on one PostgreSQL database: new work announced by one wakes the others' claims. */
  notifications: PostgresNotifications | undefined;
  runs: DeviceRuns;
  results: ResultsRepo;
  logs: LogStore;
  changes: ExecutionChanges;
  /** The files of versions (API.md §14): listed in jobs and downloaded by their agents. */
  versionFiles: VersionFilesService;
  /** How often a waiting claim looks again without a wake-up (AppOptions.claimPollIntervalMs). */
  pollIntervalMs: number;
}

/**
 * The agent protocol's composition root (API.md §7): claims with their wake-up signal, results, artifacts,
 * and the sweep that re-queues the runs of agents that went silent.
 */
export function createAgent({ registry, clock, store, config, notifications, ...deps }: AgentDeps) {
  const workSignal: WorkSignal = notifications
    ? new PostgresWorkSignal(notifications)
    : new LocalWorkSignal();
  const agents = new AgentService({
    runs: deps.runs,
    seen: registry.seen,
    results: deps.results,
    logs: deps.logs,
    signal: workSignal,
    changes: deps.changes,
    versionFiles: deps.versionFiles,
    store,
    clock,
    leaseTtlSeconds: config.leaseTtlSeconds,
    maxArtifactBytes: config.maxUploadBytes,
    stagingDir: path.join(config.dataDir, "tmp", "artifacts"),
    bodyIdleTimeoutMs: config.bodyIdleTimeoutSeconds * 1000,
    publicUrl: config.publicUrl,
    pollIntervalMs: deps.pollIntervalMs,
  });
  return {
    agents,
    /** Wakes the claims waiting for work of an organization (a trigger queued some). */
    workSignal,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(agentRoutes, { agents });
    },
    /** The artifact upload: its own plugin, registered last of the API routes (app.ts keeps the order). */
    async registerArtifactRoutes(app: FastifyInstance): Promise<void> {
      await app.register(agentArtifactRoutes, { agents });
    },
    async start(jobs: BackgroundJobs): Promise<void> {
      jobs.every("re-queue runs whose agents went silent", sweepIntervalMs(config.leaseTtlSeconds), () =>
        agents.sweep(),
      );
    },
    /** Waiting claims answer 204 at once instead of holding the close up for up to 30 s. */
    async stop(): Promise<void> {
      await agents.close();
    },
  };
}

/** Lapsed leases are found within a quarter of their TTL (at least every second, at most every 5 s). */
function sweepIntervalMs(leaseTtlSeconds: number): number {
  return Math.min(5000, Math.max(1000, (leaseTtlSeconds * 1000) / 4));
}
