import type { EventType } from "../events/index.ts";

/**
 * `data.sequence` of execution events (API.md §9): an integer that grows with each event of one execution, so
 * a receiver that gets them out of order (a retry, two instances sending: a 65 ms run's execution.finished
 * arrived before its execution.started) keeps the one with the highest.
 *
 * An execution has at most one event of each type, in this order (device-runs/execution-events.ts: the claim
 * that takes its first run starts it, the settle that makes it final finishes it, and a final execution is
 * never settled again). So its place in the lifecycle is the sequence: no counter, no column, the same on every
 * instance and database, and the same on every retry and redelivery of the message. A new execution event type
 * takes the next number at its place in the lifecycle; one that could repeat per execution would need a
 * counter kept with the execution instead.
 */
const lifecycle: Partial<Record<EventType, number>> = {
  "execution.started": 1,
  "execution.finished": 2,
};

/** The sequence of an execution event, undefined for other events. */
export function executionEventSequence(type: string): number | undefined {
  return lifecycle[type as EventType];
}
