/**
 * Wakes agents waiting in a claim long-poll when work for their organization arrives. A port: in one
 * process an in-memory list of waiters; with several API instances a shared channel (a later adapter).
 * A wake-up is only a hint to look again; a missed one costs at most one poll interval.
 */
export interface WorkSignal {
  notify(organizationId: string): void;
  /** Resolves on a notify for the organization ("*": any), after `ms`, when `abort` fires, or on close. */
  wait(organizationId: string, ms: number, abort?: AbortSignal): Promise<void>;
  close(): Promise<void>;
}

export class LocalWorkSignal implements WorkSignal {
  private readonly waiters = new Map<string, Set<() => void>>();
  private closed = false;

  notify(organizationId: string): void {
    // "*" waits for work of any organization: an --all-orgs agent's claim (API.md §15).
    for (const key of [organizationId, "*"]) {
      const waiting = this.waiters.get(key);
      if (!waiting) continue;
      this.waiters.delete(key);
      for (const wake of waiting) wake();
    }
  }

  wait(organizationId: string, ms: number, abort?: AbortSignal): Promise<void> {
    if (this.closed || abort?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        abort?.removeEventListener("abort", wake);
        this.waiters.get(organizationId)?.delete(wake);
        resolve();
      };
      const timer = setTimeout(wake, ms);
      abort?.addEventListener("abort", wake, { once: true });
      let waiting = this.waiters.get(organizationId);
      if (!waiting) {
        waiting = new Set();
        this.waiters.set(organizationId, waiting);
      }
      waiting.add(wake);
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const all = [...this.waiters.values()];
    this.waiters.clear();
    for (const waiting of all) for (const wake of waiting) wake();
  }
}
