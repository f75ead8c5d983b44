export { createAgent, createAgentRegistry } from "./agent.feature.ts";
export { agentArtifactRoutes, agentRoutes } from "./agent.routes.ts";
export { AgentService } from "./agent.service.ts";
export { AgentsRepo } from "./agents.repo.ts";
export { startLocalAgent } from "./local-agent.ts";
export { PostgresWorkSignal } from "./postgres-work-signal.ts";
export { LocalWorkSignal, type WorkSignal } from "./work-signal.ts";
