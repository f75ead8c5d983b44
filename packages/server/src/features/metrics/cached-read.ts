/**
 * One read shared by everything that asks within `ttlMs` (API.md §15: the shared gauges cost one query per
 * scrape, and a second's worth of scrapes — several Prometheus servers, or a dashboard's refreshes — cost one).
 * Time is measured on a monotonic clock, not the server's Clock: this is about load, and a test's ManualClock
 * that never moves must not freeze the values. A failed read is not kept: the next scrape tries again.
 */
export class CachedRead<T> {
  private last: { at: number; value: Promise<T> } | undefined;

  constructor(
    private readonly read: () => Promise<T>,
    private readonly ttlMs: number,
    private readonly monotonicMs: () => number = () => performance.now(),
  ) {}

  get(): Promise<T> {
    const now = this.monotonicMs();
    if (this.last && now - this.last.at < this.ttlMs) return this.last.value;
    const value = this.read();
    const entry = { at: now, value };
    this.last = entry;
    value.catch(() => {
      if (this.last === entry) this.last = undefined;
    });
    return value;
  }
}
