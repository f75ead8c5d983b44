/** An execution of the organization changed (status, test cases, log, artifacts); null: several may have. */
export interface ExecutionChange {
  organizationId: string;
  executionId: string | null;
}

type Listener = (change: ExecutionChange) => void;

/**
 * Tells the dashboards watching an organization (GET /v1/events) that an execution changed, so they read it
 * again: a hint, not the data, so there is one read path and a missed hint costs only freshness.
 *
 * Changes come in bursts (an agent reports test cases several times a second while it runs), so the hints
 * for one execution are coalesced: the first change sends one after `coalesceMs`, and the changes until then
 * ride along with it. `broadcast` carries a hint to every API instance (PostgreSQL NOTIFY when there are
 * several), whose copy of this class hands it to its own listeners through `receive`; in one process it is
 * `receive` itself.
 */
export class ExecutionChanges {
  private readonly pending = new Map<string, NodeJS.Timeout>();
  private readonly listeners = new Map<string, Set<Listener>>();
  private readonly observers = new Set<Listener>();
  private readonly broadcast: (message: string) => void;
  private readonly coalesceMs: number;

  constructor(options: { broadcast?: (message: string) => void; coalesceMs?: number } = {}) {
    this.broadcast = options.broadcast ?? ((message) => this.receive(message));
    this.coalesceMs = options.coalesceMs ?? 200;
  }

  changed(organizationId: string, executionId: string | null = null): void {
    for (const observer of this.observers) observer({ organizationId, executionId });
    const key = `${organizationId} ${executionId ?? "*"}`;
    if (this.pending.has(key)) return;
    const timer = setTimeout(() => {
      this.pending.delete(key);
      this.broadcast(JSON.stringify({ o: organizationId, e: executionId }));
    }, this.coalesceMs);
    timer.unref();
    this.pending.set(key, timer);
  }

  /** A hint from any instance (this one included): to the listeners of its organization here. */
  receive(message: string): void {
    let change: ExecutionChange;
    try {
      const parsed = JSON.parse(message) as { o?: unknown; e?: unknown };
      if (typeof parsed.o !== "string") return;
      change = { organizationId: parsed.o, executionId: typeof parsed.e === "string" ? parsed.e : null };
    } catch {
      return;
    }
    for (const listener of this.listeners.get(change.organizationId) ?? []) listener(change);
  }

  /** Calls `listener` with each change of the organization's executions until the returned function is called. */
  subscribe(organizationId: string, listener: Listener): () => void {
    let listening = this.listeners.get(organizationId);
    if (!listening) {
      listening = new Set();
      this.listeners.set(organizationId, listening);
    }
    listening.add(listener);
    return () => {
      const current = this.listeners.get(organizationId);
      current?.delete(listener);
      if (current?.size === 0) this.listeners.delete(organizationId);
    };
  }

  /**
   * Calls `observer` at once with each change announced on this instance, of any organization: not coalesced,
   * not from other instances. For work that follows a change committed here (webhooks fan out the events it
   * appended), not for dashboards. Until the returned function is called.
   */
  observe(observer: Listener): () => void {
    this.observers.add(observer);
    return () => this.observers.delete(observer);
  }

  close(): void {
    for (const timer of this.pending.values()) clearTimeout(timer);
    this.pending.clear();
  }
}
