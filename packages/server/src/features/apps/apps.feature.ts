import type { FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import { AppsRepo } from "./apps.repo.ts";
import { appsRoutes } from "./apps.routes.ts";
import { AppsService } from "./apps.service.ts";

/** Apps' composition root: the apps versions and plans belong to, and their routes. */
export function createApps({ database, clock }: { database: DatabaseHandle; clock: Clock }) {
  const apps = new AppsService(new AppsRepo(database.db), clock);
  return {
    apps,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(appsRoutes, { apps });
    },
  };
}
