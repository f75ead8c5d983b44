/**
 * An organization's cap on its running device runs (`testbay-server org set-limits NAME
 * --max-concurrent-device-runs N`, API.md §15): a claim takes a run of a limited organization only while fewer
 * than N of its runs are running.
 *
 * On SQLite a claim's transaction is the only writer (IMMEDIATE), so counting the running runs in it is exact.
 * On PostgreSQL a claim is one statement with one snapshot: two claims at once would each count N − 1 running
 * and both take one. So a claim of a limited organization also passes its gate, the organization's row:
 * - it locks the row (FOR UPDATE SKIP LOCKED): while another claim of the organization holds it, this claim
 *   takes none of its runs (the agent looks again, as for an empty queue);
 * - it requires `claim_gate` to be what its snapshot read: a claim of the organization that committed after
 *   this snapshot was taken bumped it, and PostgreSQL re-checks a locked row's condition on its newest version
 *   (the snapshot's value is computed once, before), so the row does not qualify and this claim takes nothing
 *   rather than count without the run that claim started;
 * - when it took a run it bumps `claim_gate` (gateBumpCte).
 * An organization without a limit has no gate: its claims never touch its row beyond reading it.
 */
import { type Kysely, type RawBuilder, sql } from "kysely";
import type { Database } from "../../db/schema.ts";

/**
 * Whether the organization `o` (an alias of organizations) has room for one more running device run, as the
 * snapshot sees it. The count is read only for a limited organization (the condition before it decides the
 * others), through the claim index's (organization_id, status) prefix.
 */
export function hasRoom(o: string): RawBuilder<unknown> {
  const max = sql.ref(`${o}.max_concurrent_device_runs`);
  return sql`(${max} is null or (select count(*) from device_runs running where running.organization_id = ${sql.ref(`${o}.id`)} and running.status = 'running') < ${max})`;
}

/**
 * PostgreSQL: the CTE `gate`, the chosen organization's row locked when it is limited and unchanged since the
 * snapshot (see above). `chosen` is a CTE of one row (organization_id, max_runs, claim_gate) or none.
 */
export const gateCte = sql`gate as (
    select organizations.id from organizations
    where organizations.id = (select organization_id from chosen)
      and organizations.max_concurrent_device_runs is not null
      and organizations.claim_gate = (select claim_gate from chosen)
    for update skip locked
  )`;

/** The pick's condition on PostgreSQL: an unlimited organization, or a limited one whose gate this claim holds. */
export const passesGate = sql`((select max_runs from chosen) is null or exists (select 1 from gate))`;

/** PostgreSQL: the CTE that bumps a limited organization's claim_gate when the claim took one of its runs. */
export const gateBumpCte = sql`gate_bumped as (
    update organizations set claim_gate = organizations.claim_gate + 1
    where organizations.id = (select id from gate) and exists (select 1 from picked)
  )`;

/**
 * The organization's limit and how many of its device runs run now (waiting_reason org_limit, API.md §15);
 * null when it has no limit.
 */
export async function organizationLimit(
  db: Kysely<Database>,
  organizationId: string,
): Promise<{ max: number; running: number } | null> {
  const row = await sql<{ max: number | null; running: number | string }>`
    select o.max_concurrent_device_runs as max,
      (select count(*) from device_runs r where r.organization_id = o.id and r.status = 'running') as running
    from organizations o where o.id = ${organizationId} and o.max_concurrent_device_runs is not null`.execute(
    db,
  );
  const found = row.rows[0];
  return found && found.max !== null ? { max: Number(found.max), running: Number(found.running) } : null;
}
