import type { FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { Config } from "../../config.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import type { AuditLog } from "../audit/index.ts";
import type { RateLimitPolicies } from "../ratelimit/index.ts";
import { ClientsRepo } from "./clients.repo.ts";
import { clientsRoutes } from "./clients.routes.ts";
import { ClientsService } from "./clients.service.ts";

export interface ClientsDeps {
  database: DatabaseHandle;
  clock: Clock;
  audit: AuditLog;
  config: Pick<Config, "maxUploadBytes">;
  /** For GET /v1/me's limits: the values the server enforces. */
  policies: RateLimitPolicies;
}

/** API clients' composition root: the clients (credentials, roles) and their admin routes. */
export function createClients({ database, clock, audit, config, policies }: ClientsDeps) {
  const clients = new ClientsService(new ClientsRepo(database.db), clock, audit);
  return {
    clients,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(clientsRoutes, { clients, policies, maxUploadBytes: config.maxUploadBytes });
    },
  };
}
