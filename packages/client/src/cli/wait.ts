import type { Testbay } from "../sdk/client.ts";
import type { Clock } from "../sdk/clock.ts";
import { TestbayGaveUpError } from "../sdk/errors.ts";
import { type Execution, isFinal } from "../sdk/models.ts";

export interface WaitOptions {
  clock: Clock;
  /** Stop waiting at this time (ms since the epoch): the --timeout. */
  deadlineAt: number;
  /** Told after every poll, with the executions as they are now. */
  onPoll?: (executions: Execution[]) => void;
}

export interface WaitResult {
  executions: Execution[];
  /** The deadline came before every execution ended. */
  timedOut: boolean;
  polls: number;
}

/**
 * Reads the current state of `pending` executions with as few calls as it can: they all belong to one
 * package and version, so one list call (newest first, 200 a page) usually covers them all; an execution
 * not found in the list is read by itself, as is a session that names no app (API.md §12: no package, no
 * version to list by).
 */
async function refresh(testbay: Testbay, pending: Execution[], deadlineAt: number): Promise<Execution[]> {
  const wanted = new Map(pending.map((e) => [e.id, e]));
  const found = new Map<string, Execution>();
  const groups = new Map<string, { package_name: string; version: string }>();
  for (const { package_name, version } of pending) {
    if (package_name !== null && version !== null)
      groups.set(`${package_name}\n${version}`, { package_name, version });
  }
  for (const { package_name, version } of groups.values()) {
    let cursor: string | undefined;
    do {
      const page = await testbay.executions.list(
        { package_name, version, limit: 200, ...(cursor ? { cursor } : {}) },
        { deadlineAt, untilDeadline: true },
      );
      for (const item of page.items) if (wanted.has(item.id)) found.set(item.id, item);
      cursor = page.next_cursor ?? undefined;
      // Newest first: once every wanted execution was seen there is no need to read older pages.
    } while (cursor && found.size < wanted.size);
  }
  for (const id of wanted.keys()) {
    if (!found.has(id)) found.set(id, await testbay.executions.get(id, { deadlineAt, untilDeadline: true }));
  }
  return pending.map((e) => found.get(e.id) ?? e);
}

/**
 * The pause before each poll: 250 ms first, so a run that ends at once is reported at once, doubling to 2 s,
 * then growing by half up to 15 s. A wait's calls stay far below the rate limit (4 a second, burst 20: API.md
 * §10): 4 polls in its first 2 s, one list call each whatever the number of executions, then one in 2–15 s.
 */
export const pollSchedule = { firstMs: 250, fastUntilMs: 2000, maxMs: 15_000 } as const;

export function nextPollDelayMs(delayMs: number): number {
  if (delayMs < pollSchedule.fastUntilMs) return Math.min(pollSchedule.fastUntilMs, delayMs * 2);
  return Math.min(pollSchedule.maxMs, Math.round(delayMs * 1.5));
}

/**
 * Polls until every execution is final or the deadline passes. A server that stops answering meanwhile (a
 * restart, a deploy) is read again until the deadline (CLIENT.md rule 13): the reads retry with no attempt
 * limit, and a deadline met while retrying is a timeout like any other.
 */
export async function waitForExecutions(
  testbay: Testbay,
  executions: Execution[],
  options: WaitOptions,
): Promise<WaitResult> {
  const { clock, deadlineAt } = options;
  let delay: number = pollSchedule.firstMs;
  let current = [...executions];
  let polls = 0;
  for (;;) {
    const pending = current.filter((e) => !isFinal(e.status));
    if (pending.length === 0) return { executions: current, timedOut: false, polls };
    const left = deadlineAt - clock.now();
    if (left <= 0) return { executions: current, timedOut: true, polls };
    await clock.sleep(Math.min(delay, left));
    let read: Execution[];
    try {
      read = await refresh(testbay, pending, deadlineAt);
    } catch (error) {
      if (error instanceof TestbayGaveUpError && error.why === "deadline") {
        return { executions: current, timedOut: true, polls };
      }
      throw error;
    }
    const fresh = new Map(read.map((e) => [e.id, e]));
    current = current.map((e) => fresh.get(e.id) ?? e);
    polls += 1;
    options.onPoll?.(current);
    delay = nextPollDelayMs(delay);
  }
}
