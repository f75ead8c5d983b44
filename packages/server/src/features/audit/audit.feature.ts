import type { FastifyInstance } from "fastify";
import type { Clock } from "../../clock.ts";
import type { DatabaseHandle } from "../../db/kysely.ts";
import { auditRoutes } from "./audit.routes.ts";
import { AuditLog } from "./audit-log.ts";

/** The audit log's composition root: the log every feature writes to, and GET /v1/audit. */
export function createAudit({ database, clock }: { database: DatabaseHandle; clock: Clock }) {
  const audit = new AuditLog(database.db, clock);
  return {
    audit,
    async register(app: FastifyInstance): Promise<void> {
      await app.register(auditRoutes, { audit });
    },
  };
}
