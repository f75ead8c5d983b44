/**
 * Which organization a claim serves (API.md §15 "Fair share, limits and priorities"), as the CTE `chosen`: one
 * row (organization_id, max_runs, claim_gate), or none when the claim may take no run.
 *
 * An organization's own agent serves only it: `chosen` is its row while it has room (org-limits.ts). An agent
 * client made with `--all-orgs` serves every organization, fairly: among the organizations with a queued run
 * this agent can take (and room for it), the one that had the fewest device runs start in the last 10 minutes,
 * then the one whose first run (high before normal before low, then the oldest) is the higher and older; so one
 * organization's thousand queued runs do not hold another's one run back. The recent starts are counted only
 * when two or more organizations compete (one alone needs no ranking), each through
 * device_runs_recent_starts_idx (migration 0032).
 *
 * Plain SQL both databases run (no LATERAL, which SQLite lacks): a correlated subquery finds each
 * organization's first run through the claim index (organization_id, status, priority_rank, created_at, id).
 */
import { type RawBuilder, sql } from "kysely";
import { hasRoom } from "./org-limits.ts";

/** How far back the starts that rank organizations are counted. */
export const fairShareWindowMs = 10 * 60 * 1000;

/** The order of queued runs within an organization: priority (0 high, 1 normal, 2 low), then age. */
export const runOrder = sql`device_runs.priority_rank, device_runs.created_at, device_runs.id`;

/**
 * The CTEs up to `chosen` (without the leading WITH, with a trailing comma), for a claim of `organizationId`
 * (undefined: every organization, an `--all-orgs` agent) whose runnable runs are those `queuedFits` admits.
 */
export function chosenOrganizationCtes(
  organizationId: string | undefined,
  queuedFits: RawBuilder<unknown>,
  at: string,
): RawBuilder<unknown> {
  if (organizationId !== undefined) {
    return sql`chosen as (
      select o.id as organization_id, o.max_concurrent_device_runs as max_runs, o.claim_gate
      from organizations o where o.id = ${organizationId} and ${hasRoom("o")}
    ),`;
  }
  const since = new Date(Date.parse(at) - fairShareWindowMs).toISOString();
  return sql`firsts as (
      select o.id as organization_id, o.max_concurrent_device_runs as max_runs, o.claim_gate,
        (select device_runs.id from device_runs where device_runs.organization_id = o.id and ${queuedFits}
          order by ${runOrder} limit 1) as run_id
      from organizations o where ${hasRoom("o")}
    ),
    candidates as (
      select firsts.organization_id, firsts.max_runs, firsts.claim_gate, first_run.priority_rank,
        first_run.created_at
      from firsts join device_runs first_run on first_run.id = firsts.run_id
    ),
    chosen as (
      select organization_id, max_runs, claim_gate from candidates
      order by
        case when (select count(*) from candidates) > 1
          then (select count(*) from device_runs started where started.organization_id = candidates.organization_id
            and started.started_at >= ${since})
          else 0 end,
        priority_rank, created_at, organization_id
      limit 1
    ),`;
}

/** The pick's condition on the run's organization: the chosen one. */
export function inChosenOrganization(organizationId: string | undefined): RawBuilder<unknown> {
  // An organization's own agent names it as a value, so that the claim index is used as for a literal.
  return organizationId !== undefined
    ? sql`device_runs.organization_id = ${organizationId} and exists (select 1 from chosen)`
    : sql`device_runs.organization_id = (select organization_id from chosen)`;
}
