import { isoTime } from "../../clock.ts";
import { newId } from "../../ids.ts";
import type { DeviceRunRecord } from "./executions.repo.ts";

/**
 * A device run as a new execution starts it: queued, first attempt, nothing claimed or reported yet. Made by the
 * triggers (one per device entry and shard) and by a WebDriver session (one), and queued with their execution
 * (ExecutionsRepo.insertAll, device-runs/enqueue-query.ts).
 */
export function queuedDeviceRun(run: {
  executionId: string;
  position: number;
  shard: number;
  shardCount: number;
  device: Record<string, unknown> | null;
  /** When the execution was created (ms), which also dates its ID. */
  now: number;
}): DeviceRunRecord {
  return {
    id: newId("dr", run.now),
    executionId: run.executionId,
    position: run.position,
    shard: run.shard,
    shardCount: run.shardCount,
    device: run.device,
    status: "queued",
    attempt: 1,
    createdAt: isoTime(run.now),
    startedAt: null,
    finishedAt: null,
    reason: null,
    summary: null,
    agentId: null,
    claimedDevice: null,
    steps: [],
  };
}
