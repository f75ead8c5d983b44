import type { FastifyBaseLogger, FastifyInstance } from "fastify";
import { type Clock, isoTime } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import { agentSessionRoutes } from "../agent/agent.routes.ts";
import type { AgentService } from "../agent/index.ts";
import type { SigningKey, TokenService } from "../auth/index.ts";
import type { ClientsService } from "../clients/index.ts";
import type { DeviceRuns } from "../device-runs/index.ts";
import type { ExecutionsService } from "../executions/index.ts";
import { sessionResultRoutes } from "../executions/session-result.routes.ts";
import type { ExecutionChanges } from "../live/index.ts";
import type { RateLimiter, RateLimitPolicies } from "../ratelimit/index.ts";
import type { VersionsService } from "../versions/index.ts";
import { endCancelledSession } from "./cancelled-session.ts";
import { type ChannelDeps, createChannel } from "./channel/index.ts";
import { NewSessions } from "./new-session.ts";
import { SessionDirectory } from "./session-directory.ts";
import { SessionReportsStore } from "./session-reports.ts";
import { readSessionStatusScript } from "./session-status-script.ts";
import { SessionsRepo } from "./sessions.repo.ts";
import { sessionsRoutes } from "./sessions.routes.ts";
import { w3cErrorAnswer } from "./w3c-errors.ts";
import { WebDriverAuthentication } from "./webdriver-authentication.ts";

export interface SessionsDeps {
  database: DatabaseHandle;
  clock: Clock;
  config: Pick<Config, "publicUrl" | "redisUrl" | "instanceUrl" | "host">;
  /** Forwarded commands are signed with a key derived from it (channel/relay-signature.ts). */
  signingKey: Pick<SigningKey, "privateKey">;
  log: FastifyBaseLogger;
  clients: ClientsService;
  tokens: TokenService;
  rateLimiting: { limiter: RateLimiter; policies: RateLimitPolicies };
  executions: ExecutionsService;
  versions: VersionsService;
  runs: DeviceRuns;
  /** The agent protocol: a session's report comes by the lease of its job (features/agent). */
  agents: AgentService;
  /** Wakes the agents waiting in a claim for the organization's new work (features/agent). */
  workSignal: { notify(organizationId: string): void };
  /** Every change of an organization's executions, from any instance (features/live). */
  changes: ExecutionChanges;
  /** How often a waiting new session reads its row again without a wake-up; default 1 s. */
  pollIntervalMs?: number;
  /** The relay's parts a test replaces (AppOptions.channel). */
  channel?: Partial<ChannelDeps>;
}

/**
 * WebDriver sessions' composition root (API.md §12, docs/appium-relay.md): the new session and status
 * endpoints, the agent's report of a session, a session's result, and the relay (./channel/) that takes their
 * commands to the agents, finding sessions in this feature's directory.
 */
export async function createSessions(deps: SessionsDeps) {
  const { database, clock, changes } = deps;
  const sessions = new SessionsRepo(database.db);
  const directory = new SessionDirectory(sessions);
  const authentication = new WebDriverAuthentication({
    tokens: deps.tokens,
    clients: deps.clients,
    limiter: deps.rateLimiting.limiter,
    policies: deps.rateLimiting.policies,
  });
  const newSessions = new NewSessions({
    executions: deps.executions,
    versions: deps.versions,
    sessions,
    runs: deps.runs,
    changes,
    notifyWork: (organizationId) => deps.workSignal.notify(organizationId),
    clock,
    pollIntervalMs: deps.pollIntervalMs ?? 1000,
  });
  const reports = new SessionReportsStore(sessions, changes, clock);
  // docs/appium-relay.md step 4: the agent completes a session's run when the session ends, saying why.
  deps.agents.onRunEnded(async (ended) => {
    const reason = ended.status === "cancelled" ? "cancelled" : (ended.reason ?? ended.status);
    await sessions.markEnded(ended.executionId, reason, isoTime(clock.now()));
    directory.forget(ended.executionId);
  });
  const channel = await createChannel({
    config: deps.config,
    signingKey: deps.signingKey,
    clock,
    log: deps.log,
    sessions: directory,
    // The agent ended a session on its own (idle timeout, maximum duration): its commands stop now.
    onSessionEnded: (_agent, session, reason) => {
      sessions
        .markEnded(session, reason, isoTime(clock.now()))
        .then(() => directory.forget(session))
        .catch((error) => {
          deps.log.warn({ err: error, session }, "could not record the end of a WebDriver session");
        });
    },
    // API.md §12: a session whose agent's channel is gone for more than the grace period is lost.
    onChannelLost: async (lost) => {
      await sessions.markEndedOnAgent(lost.organizationId, lost.agentId, "agent_lost", isoTime(clock.now()));
      directory.forgetAgent(lost);
    },
    // setSessionStatus through /execute/sync is Testbay's to answer, never Appium's (API.md §12).
    answerHere: async (command) => {
      const said = readSessionStatusScript(command);
      if (said === undefined) return undefined;
      if ("refused" in said) return w3cErrorAnswer("invalid argument", said.refused);
      await sessions.setResult(command.session, said.status, said.reason);
      return { status: 200, body: { value: null } };
    },
    ...deps.channel,
  });
  deps.executions.onRunningCancelled((organizationId, executionId) =>
    endCancelledSession(
      { sessions, directory, relay: channel.relay, log: deps.log },
      organizationId,
      executionId,
    ),
  );
  return {
    sessions,
    directory,
    /** The agents' channels this instance holds. */
    channels: channel.registry,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(sessionResultRoutes, { executions: deps.executions, results: sessions });
      await app.register(agentSessionRoutes, { agents: deps.agents, sessions: reports });
      await app.register(sessionsRoutes, { authentication, newSessions, publicUrl: deps.config.publicUrl });
      await channel.register(app);
    },
    stop: () => channel.stop(),
  };
}
