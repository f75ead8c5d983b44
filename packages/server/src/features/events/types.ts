/**
 * The events of the outbox (API.md §9 names them). `data` is what a webhook sends as the body's `data`.
 * Appended in the transaction of the change: execution.started and execution.finished by features/device-runs,
 * version.uploaded by features/versions, test.flaky_detected by features/tests.
 */
export type EventType =
  | "execution.started"
  | "execution.finished"
  | "version.uploaded"
  | "test.flaky_detected";

/** An event to append: in the transaction of the change that caused it. */
export interface NewEvent {
  organizationId: string;
  type: EventType;
  /** What the event is about (a test's ID, an execution's ID): lets a reader find a subject's events. */
  subjectId: string;
  data: Record<string, unknown>;
  /** ISO time of the change (the server's clock, so tests control it). */
  at: string;
}

export interface StoredEvent {
  id: string;
  organizationId: string;
  type: EventType;
  subjectId: string;
  data: Record<string, unknown>;
  createdAt: string;
}
