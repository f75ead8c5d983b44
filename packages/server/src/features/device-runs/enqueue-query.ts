/**
 * Queuing device runs: the only statement that inserts device_runs rows. A trigger queues its executions'
 * runs in the transaction that records the executions (ExecutionsRepo.insertAll in
 * features/executions/executions.repo.ts), so a batch is recorded whole or not at all. Each row carries what
 * an agent must offer to take it (requirements.ts), so that a claim is one indexed query (claim-query.ts).
 */
import type { Kysely } from "kysely";
import type { Database, ExecutionPriority, ExecutionStatus } from "../../db/schema.ts";
import { storedSelectors } from "./device-selectors.ts";
import { runsOnShard, type ShardableStep } from "./plan-shards.ts";
import { requirementsOf } from "./requirements.ts";

/** A device run to queue, with what of its execution its row keeps. */
export interface RunToQueue {
  id: string;
  executionId: string;
  organizationId: string;
  /** The execution's priority (API.md §15); absent: normal. */
  priority?: ExecutionPriority;
  /** The execution's plan: its steps say what each shard needs, max_attempts how often the run may be tried. */
  plan: { steps: ShardableStep[]; max_attempts?: number };
  position: number;
  /** The plan's device entry; null for a plan without devices (the run needs no device). */
  device: Record<string, unknown> | null;
  status: ExecutionStatus;
  attempt: number;
  /** Which shard of its device entry it is; absent: 0. */
  shard?: number;
  /** How many device runs its entry makes; absent: 1. */
  shardCount?: number;
  /** How `shards: "auto"` chose shardCount (API.md §13); absent: it was not asked. */
  shardsPlanned?: { count: number; reason: string };
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
}

/** How the claim orders priorities (fair-share.ts runOrder): a number, compared alike on both databases. */
const priorityRank: Record<ExecutionPriority, number> = { high: 0, normal: 1, low: 2 };

export async function enqueueRuns(db: Kysely<Database>, runs: readonly RunToQueue[]): Promise<void> {
  if (runs.length === 0) return;
  const selectorValues: Array<{ device_run_id: string; selector: "model" | "label"; value: string }> = [];
  await db
    .insertInto("device_runs")
    .values(
      runs.map((run) => ({
        ...requirementColumns(run, (selector, value) =>
          selectorValues.push({ device_run_id: run.id, selector, value }),
        ),
        id: run.id,
        execution_id: run.executionId,
        position: run.position,
        device: run.device === null ? null : JSON.stringify(run.device),
        status: run.status,
        attempt: run.attempt,
        shard: run.shard ?? 0,
        shard_count: run.shardCount ?? 1,
        shards_planned: run.shardsPlanned === undefined ? null : JSON.stringify(run.shardsPlanned),
        priority_rank: priorityRank[run.priority ?? "normal"],
        created_at: run.createdAt,
        started_at: run.startedAt,
        finished_at: run.finishedAt,
      })),
    )
    .execute();
  // The entry's models and labels, which the claim counts (device-selectors.ts); in chunks within SQLite's and
  // PostgreSQL's bound parameters.
  for (let at = 0; at < selectorValues.length; at += 500) {
    await db
      .insertInto("device_run_selector_values")
      .values(selectorValues.slice(at, at + 500))
      .execute();
  }
}

function requirementColumns(run: RunToQueue, addValue: (selector: "model" | "label", value: string) => void) {
  const shard = run.shard ?? 0;
  // A shard needs only the step types that run on it (inspect and shell on shard 0 only): an agent without
  // shell steps allowed can take the other shards of a plan that has one.
  const needs = requirementsOf(
    { steps: run.plan.steps.filter((step) => runsOnShard(step, shard)) },
    run.device,
  );
  const { models, labels, ...selectorColumns } = storedSelectors(needs.selectors);
  for (const model of models) addValue("model", model);
  for (const label of labels) addValue("label", label);
  return {
    ...selectorColumns,
    required_models: models.length,
    required_labels: labels.length,
    organization_id: run.organizationId,
    required_platform: needs.platform,
    required_model: needs.model,
    required_os_version: needs.osVersion,
    required_os_version_prefix: needs.osVersionPrefix,
    needs: needs.needs,
    max_attempts: run.plan.max_attempts ?? 1,
  };
}
