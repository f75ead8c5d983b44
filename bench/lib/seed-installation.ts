// An installation's history as the metrics gauges see it, seeded with SQL (generate_series) straight into
// PostgreSQL: a million executions through the API would take hours. Several organizations of uneven size, plans
// of several shapes (one device, two, a sharded entry, the host), most executions finished, the newest queued or
// running, and device runs carrying the columns packages/server/src/features/metrics/shared-state.ts reads
// (status, position, shard, required_platform, organization_id, agent_id, claimed_device), plus agents online
// and gone. Every value is a function of the row's number, so two runs seed the same rows.
import type pg from "pg";

export interface InstallationSpec {
  executions: number;
  /** The newest executions still queued, and the ones just before them still running. */
  queued: number;
  running: number;
  /** The organization and ci client bench/servers/testbay.ts made: the first (and largest) of the seeded ones. */
  organizationId: string;
  clientId: string;
  /** An app version every execution references (executions.app_version_id is a foreign key). */
  appVersionId: string;
  packageName: string;
  version: string;
  /** Unix ms of the newest execution. */
  now: number;
}

export interface SeededInstallation {
  executions: number;
  deviceRuns: number;
  /** Device runs by status. */
  deviceRunsByStatus: Record<string, number>;
  organizations: number;
  /** Agents seen within the online window at seeding, and their ids; agentsGone were last seen a day ago. */
  onlineAgents: Array<{ organizationId: string; id: string }>;
  agentsGone: number;
  seconds: number;
}

/** Organizations besides the server's own; their shares of the executions, in twentieths (8/20 for the first). */
const extraOrganizations = 5;
const shareOfTwentieths = [0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 3, 3, 4, 4, 5];
/** Plans per organization; plan k has shape k % shapes.length. */
const plansPerOrganization = 12;
/** One execution every 30 s: a million span about a year. */
const stepMs = 30_000;
/** Rows per INSERT (and per transaction): bounds the WAL and the memory of one statement. */
const chunkRows = 100_000;
/** Online agents per organization; each offers these devices free at its last claim. */
const agentsPerOrganization = 2;

const android = { platform: "android", model: "Pixel 7", os_version: "14" };
const ios = { platform: "ios", model: "iPhone 15", os_version: "17.4" };

/** A plan's device entries: a device run per entry, or per shard of a sharded entry; none runs on the host. */
const shapes: Array<{ devices: Array<typeof android | null>; shards: number }> = [
  { devices: [android], shards: 1 },
  { devices: [android], shards: 1 },
  { devices: [android], shards: 1 },
  { devices: [ios], shards: 1 },
  { devices: [android, ios], shards: 1 },
  { devices: [android], shards: 2 },
  { devices: [null], shards: 1 },
  { devices: [android, android], shards: 1 },
];

/**
 * A cheap hash of the row number to 0–65535 (multiplicative hashing, a different odd multiplier per use so the
 * values are not correlated), as lib/seed-executions.ts does.
 */
const multipliers = [2654435761, 2246822519, 3266489917, 668265263, 374761393, 3144134277, 1640531527];
const hash = (use: number) => `(s.i * ${multipliers[use]} % 4294967296 / 65536)`;
const iso = (ms: string) =>
  `to_char(to_timestamp((${ms}) / 1000.0) at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;
const isoOf = (ms: number) => new Date(ms).toISOString();

/** One row per execution in [lo, hi): its organization, plan, times and status, for both inserts. */
function executionValues(spec: InstallationSpec, lo: number, hi: number): string {
  const n = spec.executions;
  const outcome = `${hash(3)} % 100`;
  return `
    select s.i,
      (array[${shareOfTwentieths.join(",")}])[1 + ${hash(0)} % 20] as o,
      ${hash(1)} % ${plansPerOrganization} as plan,
      ${hash(1)} % ${plansPerOrganization} % ${shapes.length} as shape,
      ${spec.now} - (${n - 1} - s.i) * ${stepMs} as created_ms,
      5000 + ${hash(2)} % 120000 as wait_ms,
      30000 + ${hash(4)} % 900000 as took_ms,
      case
        when s.i >= ${n - spec.queued} then 'queued'
        when s.i >= ${n - spec.queued - spec.running} then 'running'
        when ${outcome} < 75 then 'passed'
        when ${outcome} < 90 then 'failed'
        when ${outcome} < 95 then 'errored'
        else 'cancelled'
      end as status,
      case ${hash(5)} % 20 when 0 then 'high' when 1 then 'low' else 'normal' end as priority,
      10 + ${hash(6)} % 90 as tests,
      1 + ${hash(5)} % 5 as failed_tests
    from generate_series(${lo}::bigint, ${hi - 1}::bigint) as s(i)`;
}

/** Seeds organizations, executions, device runs and agents on `client` (its temp tables live with it). */
export async function seedInstallation(
  client: pg.Client,
  spec: InstallationSpec,
  progress: (done: { executions: number; deviceRuns: number; seconds: number }) => void,
): Promise<SeededInstallation> {
  const started = performance.now();
  const organizationIds = [
    spec.organizationId,
    ...Array.from({ length: extraOrganizations }, (_, k) => `org_metrics_${k + 1}`),
  ];
  for (const id of organizationIds.slice(1)) {
    await client.query("insert into organizations (id, name, created_at) values ($1, $2, $3)", [
      id,
      id.replace(/_/g, "-"),
      isoOf(spec.now - spec.executions * stepMs),
    ]);
  }

  await client.query(`
    create temp table bench_shapes (shape integer primary key, plan_json text not null);
    create temp table bench_slots (shape integer not null, position integer not null, shard integer not null,
      shard_count integer not null, device text, platform text, model text, os_version text)`);
  for (const [k, shape] of shapes.entries()) {
    const plan = {
      name: `shape-${k}`,
      devices: shape.devices.filter((d) => d !== null).map(({ platform, model }) => ({ platform, model })),
      steps: [{ type: "instrumentation", ...(shape.shards > 1 ? { shards: shape.shards } : {}) }],
      timeout_seconds: 1800,
      max_attempts: 1,
    };
    await client.query("insert into bench_shapes values ($1, $2)", [k, JSON.stringify(plan)]);
    for (const [position, device] of shape.devices.entries()) {
      for (let shard = 0; shard < shape.shards; shard++) {
        await client.query("insert into bench_slots values ($1, $2, $3, $4, $5, $6, $7, $8)", [
          k,
          position,
          shard,
          shape.shards,
          device === null ? null : JSON.stringify({ platform: device.platform, model: device.model }),
          device?.platform ?? null,
          device?.model ?? null,
          device?.os_version ?? null,
        ]);
      }
    }
  }

  const leaseExpiresAt = isoOf(spec.now + 2 * 3600_000);
  const done = { executions: 0, deviceRuns: 0, seconds: 0 };
  for (let lo = 0; lo < spec.executions; lo += chunkRows) {
    const hi = Math.min(spec.executions, lo + chunkRows);
    const values = executionValues(spec, lo, hi);
    await client.query("begin");
    try {
      const executions = await client.query(
        `insert into executions (id, organization_id, test_plan_id, app_version_id, package_name, version, status,
           plan, env, summary, cancel_requested, triggered_by, created_at, started_at, finished_at, priority)
         select 'ex_metrics_' || lpad(x.i::text, 12, '0'), ($1::text[])[1 + x.o], 'tp_metrics_' || x.o || '_' || x.plan,
           $2, $3, $4, x.status, sh.plan_json, '{}',
           '{"tests":' || x.tests || ',"passed":' || (x.tests - x.failed) || ',"failed":' || x.failed ||
             ',"skipped":0,"flaky":0}',
           case when x.status = 'cancelled' then 1 else 0 end, $5,
           ${iso("x.created_ms")},
           case when x.status <> 'queued' then ${iso("x.created_ms + x.wait_ms")} end,
           case when x.status not in ('queued', 'running') then ${iso("x.created_ms + x.wait_ms + x.took_ms")} end,
           x.priority
         from (
           select v.*, case when v.status in ('queued', 'running') then 0 when v.status = 'failed' then v.failed_tests
             else 0 end as failed
           from (${values}) v
         ) x join bench_shapes sh on sh.shape = x.shape
         order by x.i`,
        [organizationIds, spec.appVersionId, spec.packageName, spec.version, spec.clientId],
      );
      // A running execution's first run is running; its other runs half running, half still queued.
      const deviceRuns = await client.query(
        `insert into device_runs (id, execution_id, position, device, status, attempt, created_at, started_at,
           finished_at, priority_rank, organization_id, required_platform, required_model, needs, max_attempts,
           lease_id, lease_expires_at, agent_id, claimed_device, shard, shard_count)
         select r.id, r.execution_id, r.position, r.device, r.run_status, 1, ${iso("r.created_ms")},
           case when r.run_status <> 'queued' then ${iso("r.created_ms + r.wait_ms")} end,
           case when r.run_status not in ('queued', 'running') then ${iso("r.created_ms + r.wait_ms + r.took_ms")} end,
           case r.priority when 'high' then 0 when 'low' then 2 else 1 end,
           ($1::text[])[1 + r.o], r.platform, r.model, 'instrumentation', 1,
           case when r.run_status = 'running' then 'ls_' || r.id end,
           case when r.run_status = 'running' then $2 end,
           case when r.run_status <> 'queued' then 'agent-' || r.o || '-' || (r.i % ${agentsPerOrganization}) end,
           case when r.run_status <> 'queued' and r.platform is not null then
             '{"serial":"' || r.platform || '-' || r.i || '-' || r.position || '-' || r.shard || '","platform":"' ||
             r.platform || '","model":"' || r.model || '","os_version":"' || r.os_version || '"}' end,
           r.shard, r.shard_count
         from (
           select x.*, sl.position, sl.shard, sl.shard_count, sl.device, sl.platform, sl.model, sl.os_version,
             'ex_metrics_' || lpad(x.i::text, 12, '0') as execution_id,
             'dr_metrics_' || lpad(x.i::text, 12, '0') || '_' || sl.position || '_' || sl.shard as id,
             case when x.status = 'running' and (sl.position > 0 or sl.shard > 0) and x.i % 2 = 1 then 'queued'
               else x.status end as run_status
           from (${values}) x join bench_slots sl on sl.shape = x.shape
         ) r
         order by r.id`,
        [organizationIds, leaseExpiresAt],
      );
      await client.query("commit");
      done.executions += executions.rowCount ?? 0;
      done.deviceRuns += deviceRuns.rowCount ?? 0;
    } catch (error) {
      await client.query("rollback");
      throw error;
    }
    done.seconds = (performance.now() - started) / 1000;
    progress(done);
  }
  await client.query("drop table bench_shapes, bench_slots");

  const onlineAgents = organizationIds.flatMap((organizationId, o) =>
    Array.from({ length: agentsPerOrganization }, (_, k) => ({ organizationId, id: `agent-${o}-${k}` })),
  );
  const freeDevices = (o: number, k: number) => [
    ...Array.from({ length: 4 }, (_, d) => ({ serial: `free-${o}-${k}-${d}`, ...android })),
    { serial: `free-${o}-${k}-ios`, ...ios },
  ];
  for (const [index, agent] of onlineAgents.entries()) {
    const [o, k] = agent.id.split("-").slice(1).map(Number) as [number, number];
    // One agent has drained a device after three infrastructure failures in a row.
    const drained = index === 0 ? [{ serial: `drained-${o}-${k}`, ...android }] : [];
    await insertAgent(client, agent, isoOf(spec.now), freeDevices(o, k), drained);
  }
  const gone = organizationIds.map((organizationId, o) => ({ organizationId, id: `gone-${o}` }));
  for (const agent of gone) await insertAgent(client, agent, isoOf(spec.now - 86_400_000), [], []);

  await client.query("vacuum (analyze) organizations, executions, device_runs, agents");
  // So that the seeding's writes are on disk before measuring, not flushed during it.
  await client.query("checkpoint");
  const byStatus = await client.query<{ status: string; n: string }>(
    "select status, count(*) as n from device_runs group by status order by status",
  );
  done.seconds = (performance.now() - started) / 1000;
  return {
    executions: done.executions,
    deviceRuns: done.deviceRuns,
    deviceRunsByStatus: Object.fromEntries(byStatus.rows.map((row) => [row.status, Number(row.n)])),
    organizations: organizationIds.length,
    onlineAgents,
    agentsGone: gone.length,
    seconds: done.seconds,
  };
}

async function insertAgent(
  client: pg.Client,
  agent: { organizationId: string; id: string },
  lastSeenAt: string,
  devices: unknown[],
  drained: unknown[],
): Promise<void> {
  await client.query(
    `insert into agents (organization_id, id, name, last_seen_at, step_types, devices, drained_devices)
     values ($1, $2, $3, $4, 'inspect,instrumentation,shell', $5, $6)`,
    [agent.organizationId, agent.id, agent.id, lastSeenAt, JSON.stringify(devices), JSON.stringify(drained)],
  );
}
