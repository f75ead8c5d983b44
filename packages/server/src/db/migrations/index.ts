import type { Migration } from "kysely";
import * as identity from "./2026-11-22-0001-identity.ts";
import * as apps from "./2026-11-22-0002-apps.ts";
import * as testplans from "./2026-11-22-0003-testplans.ts";
import * as executions from "./2026-11-22-0004-executions.ts";
import * as executionFilterIndexes from "./2026-11-23-0005-execution-filter-indexes.ts";
import * as agents from "./2026-11-23-0006-agents.ts";
import * as logChunks from "./2026-11-23-0007-log-chunks.ts";
import * as testPackages from "./2026-11-23-0008-test-packages.ts";
import * as agentsSeen from "./2026-11-23-0009-agents-seen.ts";
import * as testCaseArtifacts from "./2026-11-24-0010-test-case-artifacts.ts";
import * as rotationAndDeletedVersions from "./2026-11-24-0011-rotation-and-deleted-versions.ts";
import * as executionCi from "./2026-11-24-0012-execution-ci.ts";
import * as people from "./2026-11-24-0013-people.ts";
import * as auditEvents from "./2026-11-24-0014-audit-events.ts";
import * as testCaseVideoOffset from "./2026-11-24-0015-test-case-video-offset.ts";
import * as userLastSignIn from "./2026-11-24-0016-user-last-sign-in.ts";
import * as testQuarantine from "./2026-11-24-0017-test-quarantine.ts";
import * as testCaseRetry from "./2026-11-24-0018-test-case-retry.ts";
import * as shards from "./2026-11-24-0019-shards.ts";
import * as events from "./2026-11-24-0020-events.ts";
import * as claimId from "./2026-11-24-0021-claim-id.ts";
import * as webhooks from "./2026-11-24-0022-webhooks.ts";
import * as webhookRequests from "./2026-11-25-0023-webhook-requests.ts";
import * as clientNames from "./2026-11-28-0024-client-names.ts";
import * as peoplePerOrganization from "./2026-11-28-0025-people-per-organization.ts";
import * as webdriverSessions from "./2026-11-28-0026-webdriver-sessions.ts";
import * as agentAppium from "./2026-11-28-0027-agent-appium.ts";
import * as sessionOsVersionPrefix from "./2026-11-28-0028-session-os-version-prefix.ts";
import * as devicePools from "./2026-11-28-0029-device-pools.ts";
import * as versionFiles from "./2026-11-28-0030-version-files.ts";
import * as schedules from "./2026-11-28-0031-schedules.ts";
import * as fairShare from "./2026-11-28-0032-fair-share.ts";
import * as failureSignatures from "./2026-11-28-0033-failure-signatures.ts";
import * as fleetAgents from "./2026-11-28-0034-fleet-agents.ts";
import * as failureGroups from "./2026-11-28-0035-failure-groups.ts";

/** Every migration, by dated name; Kysely applies them in name order. Add new ones at the end. */
export const migrations: Record<string, Migration> = {
  "2026-11-22-0001-identity": identity,
  "2026-11-22-0002-apps": apps,
  "2026-11-22-0003-testplans": testplans,
  "2026-11-22-0004-executions": executions,
  "2026-11-23-0005-execution-filter-indexes": executionFilterIndexes,
  "2026-11-23-0006-agents": agents,
  "2026-11-23-0007-log-chunks": logChunks,
  "2026-11-23-0008-test-packages": testPackages,
  "2026-11-23-0009-agents-seen": agentsSeen,
  "2026-11-24-0010-test-case-artifacts": testCaseArtifacts,
  "2026-11-24-0011-rotation-and-deleted-versions": rotationAndDeletedVersions,
  "2026-11-24-0012-execution-ci": executionCi,
  "2026-11-24-0013-people": people,
  "2026-11-24-0014-audit-events": auditEvents,
  "2026-11-24-0015-test-case-video-offset": testCaseVideoOffset,
  "2026-11-24-0016-user-last-sign-in": userLastSignIn,
  "2026-11-24-0017-test-quarantine": testQuarantine,
  "2026-11-24-0018-test-case-retry": testCaseRetry,
  "2026-11-24-0019-shards": shards,
  "2026-11-24-0020-events": events,
  "2026-11-24-0021-claim-id": claimId,
  "2026-11-24-0022-webhooks": webhooks,
  "2026-11-25-0023-webhook-requests": webhookRequests,
  "2026-11-28-0024-client-names": clientNames,
  "2026-11-28-0025-people-per-organization": peoplePerOrganization,
  "2026-11-28-0026-webdriver-sessions": webdriverSessions,
  "2026-11-28-0027-agent-appium": agentAppium,
  "2026-11-28-0028-session-os-version-prefix": sessionOsVersionPrefix,
  "2026-11-28-0029-device-pools": devicePools,
  "2026-11-28-0030-version-files": versionFiles,
  "2026-11-28-0031-schedules": schedules,
  "2026-11-28-0032-fair-share": fairShare,
  "2026-11-28-0033-failure-signatures": failureSignatures,
  "2026-11-28-0034-fleet-agents": fleetAgents,
  "2026-11-28-0035-failure-groups": failureGroups,
};
