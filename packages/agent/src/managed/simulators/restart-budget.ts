/**
 * How often a managed simulator may be started again after it gave way (API.md §13: "at most three restarts in
 * an hour, four launches in all; then its state is failed"). Read as a sliding hour: the first launch and up to
 * three restarts within any 60 minutes. A simulator that needs a fourth restart within the hour of its first
 * three is not getting better by restarting: it is failed and says why, instead of being booted forever.
 * A simulator that broke once a day keeps being mended.
 */
export const RESTARTS_PER_HOUR = 3;
const HOUR_MS = 60 * 60 * 1000;

export class RestartBudget {
  private readonly restarts: number[] = [];

  constructor(
    private readonly now: () => number = Date.now,
    private readonly limit = RESTARTS_PER_HOUR,
    private readonly windowMs = HOUR_MS,
  ) {}

  /** Takes one restart if the last hour has room for it; false when the budget is spent. */
  take(): boolean {
    const now = this.now();
    while (this.restarts.length > 0 && (this.restarts[0] as number) <= now - this.windowMs)
      this.restarts.shift();
    if (this.restarts.length >= this.limit) return false;
    this.restarts.push(now);
    return true;
  }

  /** Restarts taken within the last hour. */
  get used(): number {
    const now = this.now();
    return this.restarts.filter((at) => at > now - this.windowMs).length;
  }
}
