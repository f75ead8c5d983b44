export { createAudit } from "./audit.feature.ts";
export { auditRoutes } from "./audit.routes.ts";
export {
  type Actor,
  type AuditAction,
  type AuditEntry,
  AuditLog,
  actorOf,
  serverActor,
} from "./audit-log.ts";
