/**
 * A claim: the first queued run this agent can do becomes its (the organization fair-share.ts chooses, within
 * its limit, org-limits.ts; within the organization high priority first, then the oldest), with the attempt recorded, the execution
 * started, and the job's material (plan, binary, test package) read back. On PostgreSQL that is one
 * statement (SKIP LOCKED lets concurrent claims take the next run instead of waiting for this one); on SQLite,
 * whose transactions here are IMMEDIATE (one writer at a time), one UPDATE … RETURNING and the rest after it.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Dialect } from "../../db/kysely.ts";
import type { Database } from "../../db/schema.ts";
import { isClaimable, meetsSelectorsSql } from "./device-selectors.ts";
import { appendExecutionEvent, insertExecutionEvent } from "./execution-events.ts";
import { chosenOrganizationCtes, inChosenOrganization, runOrder } from "./fair-share.ts";
import { gateBumpCte, gateCte, passesGate } from "./org-limits.ts";
import { osVersionPrefixes } from "./os-version-prefix.ts";
import type { RunShard } from "./plan-shards.ts";
import { runnableSets } from "./requirements.ts";
import type { AgentDevice, ClaimedRun, ClaimRequest } from "./types.ts";

export interface NewLease {
  leaseId: string;
  leaseExpiresAt: string;
  at: string;
}

/**
 * A run that needs a device fits this one: its platform, the model and the exact OS version of a plan's entry
 * when given, and a session's OS version prefix when given (os-version-prefix.ts: the prefixes this device's
 * version answers to, so the comparison is an IN list on both databases), and the entry's selectors of API.md
 * §13 (device-selectors.ts, the rule the waiting reason and shards: "auto" use too).
 */
function fitsDevice(d: AgentDevice): RawBuilder<unknown> {
  return sql`required_platform = ${d.platform} and (required_model is null or required_model = ${d.model}) and (required_os_version is null or required_os_version = ${d.os_version}) and (required_os_version_prefix is null or required_os_version_prefix in (${sql.join(osVersionPrefixes(d.os_version))})) and ${meetsSelectorsSql(d)}`;
}

/** The offered devices a run may go to: idle ones (device-selectors.ts isClaimable). */
function claimableDevices(request: ClaimRequest): readonly AgentDevice[] {
  return request.devices.filter(isClaimable);
}

/**
 * What the agent can run, as a condition on a queued device_runs row of any organization (undefined: nothing it
 * could run). Which organization is fair-share.ts's.
 */
function queuedFits(request: ClaimRequest): RawBuilder<unknown> | undefined {
  const sets = runnableSets(request.stepTypes);
  const devices = claimableDevices(request);
  if ((!request.host && devices.length === 0) || sets.length === 0) return undefined;
  const fits = [
    ...(request.host ? [sql`required_platform is null`] : []),
    ...devices.map((d) => sql`(${fitsDevice(d)})`),
  ];
  return sql`device_runs.status = 'queued' and needs in (${sql.join(sets)}) and (${sql.join(fits, sql` or `)})`;
}

/** The organization a claim serves: its agent's, or every one for an `--all-orgs` agent (fair-share.ts). */
function servedOrganization(request: ClaimRequest): string | undefined {
  return request.allOrganizations ? undefined : request.organizationId;
}

/**
 * The claim's SELECT of the run an organization's own agent would take, without the organization's limit
 * (org-limits.ts) that the claim adds (undefined: the agent offers nothing); the claim bench EXPLAINs it.
 */
export function nextRun(request: ClaimRequest): RawBuilder<{ id: string }> | undefined {
  const fits = queuedFits(request);
  if (!fits) return undefined;
  return sql<{
    id: string;
  }>`select id from device_runs where device_runs.organization_id = ${request.organizationId} and ${fits} order by ${runOrder} limit 1`;
}

/**
 * The CTEs (without WITH, trailing comma) and SELECT of the run a claim takes: the first of the chosen
 * organization's runnable runs (fair-share.ts), on PostgreSQL only through its limit's gate (org-limits.ts).
 */
function pick(
  request: ClaimRequest,
  dialect: Dialect,
  at: string,
): { ctes: RawBuilder<unknown>; select: RawBuilder<{ id: string }> } | undefined {
  const fits = queuedFits(request);
  if (!fits) return undefined;
  const organizationId = servedOrganization(request);
  const chosen = chosenOrganizationCtes(organizationId, fits, at);
  const where = sql`${inChosenOrganization(organizationId)} and ${fits}`;
  if (dialect === "postgres") {
    return {
      ctes: sql`${chosen} ${gateCte},`,
      select: sql<{
        id: string;
      }>`select id from device_runs where ${where} and ${passesGate} order by ${runOrder} limit 1`,
    };
  }
  return {
    ctes: chosen,
    select: sql<{ id: string }>`select id from device_runs where ${where} order by ${runOrder} limit 1`,
  };
}

/** The first of the agent's devices the run fits (as JSON text), null on the host: the run's claimed_device. */
function claimedDevice(devices: readonly AgentDevice[]): RawBuilder<unknown> {
  if (devices.length === 0) return sql`cast(null as text)`;
  const cases = devices.map((d) => sql`when ${fitsDevice(d)} then cast(${JSON.stringify(d)} as text)`);
  return sql`case when required_platform is null then cast(null as text) ${sql.join(cases, sql` `)} else cast(null as text) end`;
}

const jobColumns = sql`e.plan, e.env, e.package_name, e.version, e.app_version_id, e.cancel_requested,
  e.created_at as execution_created_at,
  v.sha256 as binary_sha256, v.size_bytes as binary_size_bytes, v.binary as binary_metadata,
  tp.sha256 as test_sha256, tp.size_bytes as test_size_bytes, tp.test as test_info`;

const jobJoins = sql`join executions e on e.id = claimed.execution_id
  left join app_versions v on v.id = e.app_version_id
  left join test_packages tp on tp.app_version_id = e.app_version_id`;

type ClaimedRow = {
  id: string;
  execution_id: string;
  organization_id: string;
  position: number;
  shard: number;
  shard_count: number;
  attempt: number;
  max_attempts: number | null;
  claimed_device: string | null;
  /** The plan's device entry the run was made for (JSON), null for a run that needs no device. */
  device: string | null;
  plan: string;
  env: string;
  package_name: string | null;
  version: string | null;
  app_version_id: string | null;
  cancel_requested: number;
  binary_sha256: string | null;
  binary_size_bytes: number | string | null;
  binary_metadata: string | null;
  test_sha256: string | null;
  test_size_bytes: number | string | null;
  test_info: string | null;
  execution_created_at: string;
  /** 1 when this claim started the execution (moved it from queued to running). */
  started_execution: number | string;
};

export async function claimRun(
  db: Kysely<Database>,
  dialect: Dialect,
  request: ClaimRequest,
  lease: NewLease,
): Promise<(ClaimedRun & RunShard) | undefined> {
  const next = pick(request, dialect, lease.at);
  if (!next) return undefined;
  const take = sql`status = 'running', lease_id = ${lease.leaseId}, lease_expires_at = ${lease.leaseExpiresAt},
    agent_id = ${request.agentId}, claim_id = ${request.claimId ?? null}, claimed_device = ${claimedDevice(claimableDevices(request))}, started_at = ${lease.at},
    finished_at = null, reason = null, setup_ms = null`;
  const returning = sql`id, execution_id, organization_id, position, shard, shard_count, attempt, max_attempts, claimed_device, device`;
  let row: ClaimedRow | undefined;
  if (dialect === "postgres") {
    const result = await sql<ClaimedRow>`with ${next.ctes}
      picked as (${next.select} for update skip locked),
      ${gateBumpCte},
      claimed as (
        -- The run by its primary key: joined to picked instead (update … from picked), the planner scanned
        -- every queued run and filtered them by id, a cost growing with the queue.
        update device_runs set ${take}
        where device_runs.id = (select id from picked) and device_runs.status = 'queued'
        returning device_runs.id, device_runs.execution_id, device_runs.organization_id, device_runs.position, device_runs.shard,
          device_runs.shard_count, device_runs.attempt,
          device_runs.max_attempts, device_runs.claimed_device, device_runs.device
      ),
      attempt_started as (
        insert into device_run_attempts (device_run_id, attempt, lease_id, agent_id, device, status, started_at)
        select id, attempt, ${lease.leaseId}, ${request.agentId}, claimed_device, 'running', ${lease.at} from claimed
      ),
      execution_started as (
        update executions set status = 'running', started_at = coalesce(executions.started_at, ${lease.at}),
          finished_at = null
        from claimed where executions.id = claimed.execution_id and executions.status = 'queued'
        returning executions.id, executions.organization_id, executions.status
      ),
      started_event as (${insertExecutionEvent(dialect, "execution.started", sql`execution_started`, lease.at)})
      select claimed.*, ${jobColumns}, (select count(*) from execution_started) as started_execution
      from claimed ${jobJoins}`.execute(db);
    row = result.rows[0];
  } else {
    row = await db.transaction().execute(async (trx) => {
      const taken = await sql<{
        id: string;
        execution_id: string;
        claimed_device: string | null;
        attempt: number;
      }>`
        update device_runs set ${take} where id = (with ${next.ctes} p as (${next.select}) select id from p)
        returning ${returning}`.execute(trx);
      const claimed = taken.rows[0];
      if (!claimed) return undefined;
      await trx
        .insertInto("device_run_attempts")
        .values({
          device_run_id: claimed.id,
          attempt: Number(claimed.attempt),
          lease_id: lease.leaseId,
          agent_id: request.agentId,
          device: claimed.claimed_device,
          status: "running",
          reason: null,
          summary: null,
          started_at: lease.at,
          finished_at: null,
        })
        .execute();
      // The execution starts with its first claimed run; a later claim finds it running and changes nothing.
      const started = await trx
        .updateTable("executions")
        .set({ status: "running", started_at: lease.at, finished_at: null })
        .where("id", "=", claimed.execution_id)
        .where("status", "=", "queued")
        .returning(["id", "organization_id", "status"])
        .executeTakeFirst();
      if (started) {
        await appendExecutionEvent(
          trx,
          "execution.started",
          { id: started.id, organizationId: started.organization_id, status: started.status },
          lease.at,
        );
      }
      const job = await sql<ClaimedRow>`select claimed.*, ${jobColumns},
        ${started ? 1 : 0} as started_execution
        from (select ${returning} from device_runs where id = ${claimed.id}) claimed ${jobJoins}`.execute(
        trx,
      );
      return job.rows[0];
    });
  }
  return row && toClaimedRun(row, lease);
}

function toClaimedRun(row: ClaimedRow, lease: NewLease): ClaimedRun & RunShard {
  // Deleting a version is refused while its executions are queued or running, so it is there, unless the
  // execution has none (a WebDriver session without a registered app, API.md §12).
  if (row.version !== null && (row.binary_sha256 === null || row.binary_metadata === null)) {
    throw new Error(`the version of execution ${row.execution_id} (claimed run ${row.id}) is missing`);
  }
  return {
    leaseId: lease.leaseId,
    leaseExpiresAt: lease.leaseExpiresAt,
    deviceRunId: row.id,
    executionId: row.execution_id,
    organizationId: row.organization_id,
    position: Number(row.position),
    shard: Number(row.shard),
    shardCount: Number(row.shard_count),
    attempt: Number(row.attempt),
    maxAttempts: Number(row.max_attempts ?? 1),
    device: row.claimed_device === null ? null : (JSON.parse(row.claimed_device) as AgentDevice),
    deviceEntry: row.device === null ? null : (JSON.parse(row.device) as Record<string, unknown>),
    cancelRequested: Number(row.cancel_requested) === 1,
    plan: JSON.parse(row.plan) as Record<string, unknown>,
    env: JSON.parse(row.env) as Record<string, string>,
    packageName: row.package_name,
    version: row.version,
    appVersionId: row.app_version_id,
    binary:
      row.binary_sha256 === null || row.binary_metadata === null
        ? null
        : {
            sha256: row.binary_sha256,
            sizeBytes: Number(row.binary_size_bytes),
            metadata: JSON.parse(row.binary_metadata) as unknown,
          },
    testPackage:
      row.test_sha256 === null || row.test_info === null
        ? null
        : {
            sha256: row.test_sha256,
            sizeBytes: Number(row.test_size_bytes),
            test: JSON.parse(row.test_info) as unknown,
          },
    ...(Number(row.started_execution) > 0 ? { executionQueuedAt: row.execution_created_at } : {}),
  };
}
