import type { Testbay } from "../sdk/client.ts";
import type { Clock } from "../sdk/clock.ts";
import { type Execution, isFinal } from "../sdk/models.ts";

export interface WaitOptions {
  clock: Clock;
  /** Stop waiting at this time (ms since the epoch): the --timeout. */
  deadlineAt: number;
  /** First pause between polls; it grows by `factor` up to `maxDelayMs`. */
  initialDelayMs?: number;
  maxDelayMs?: number;
  factor?: number;
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
 * not found in the list is read by itself.
 */
async function refresh(testbay: Testbay, pending: Execution[], deadlineAt: number): Promise<Execution[]> {
  const wanted = new Map(pending.map((e) => [e.id, e]));
  const found = new Map<string, Execution>();
  const groups = new Map<string, { package_name: string; version: string }>();
  for (const e of pending) groups.set(`${e.package_name}\n${e.version}`, e);
  for (const { package_name, version } of groups.values()) {
    let cursor: string | undefined;
    do {
      const page = await testbay.executions.list(
        { package_name, version, limit: 200, ...(cursor ? { cursor } : {}) },
        { deadlineAt },
      );
      for (const item of page.items) if (wanted.has(item.id)) found.set(item.id, item);
      cursor = page.next_cursor ?? undefined;
      // Newest first: once every wanted execution was seen there is no need to read older pages.
    } while (cursor && found.size < wanted.size);
  }
  for (const id of wanted.keys()) {
    if (!found.has(id)) found.set(id, await testbay.executions.get(id, { deadlineAt }));
  }
  return pending.map((e) => found.get(e.id) ?? e);
}

/**
 * Polls until every execution is final or the deadline passes, pausing 2 s at first and up to 15 s: paced
 * far below the rate limit (one list call per poll, whatever the number of executions).
 */
export async function waitForExecutions(
  testbay: Testbay,
  executions: Execution[],
  options: WaitOptions,
): Promise<WaitResult> {
  const { clock, deadlineAt } = options;
  const factor = options.factor ?? 1.5;
  const maxDelayMs = options.maxDelayMs ?? 15_000;
  let delay = options.initialDelayMs ?? 2000;
  let current = [...executions];
  let polls = 0;
  for (;;) {
    const pending = current.filter((e) => !isFinal(e.status));
    if (pending.length === 0) return { executions: current, timedOut: false, polls };
    const left = deadlineAt - clock.now();
    if (left <= 0) return { executions: current, timedOut: true, polls };
    await clock.sleep(Math.min(delay, left));
    const fresh = new Map((await refresh(testbay, pending, deadlineAt)).map((e) => [e.id, e]));
    current = current.map((e) => fresh.get(e.id) ?? e);
    polls += 1;
    options.onPoll?.(current);
    delay = Math.min(maxDelayMs, Math.round(delay * factor));
  }
}
