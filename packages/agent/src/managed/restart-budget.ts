/**
 * API.md §13: a managed device that gives way is killed and started again, at most three times in an hour and
 * four launches in all; after that it stays `failed`. The budget counts only those healing restarts: the
 * restart that resets a `-read-only` instance between runs is routine and costs nothing.
 */
export const RESTARTS_PER_HOUR = 3;
export const MAX_LAUNCHES = 4;
const HOUR_MS = 3_600_000;

export class RestartBudget {
  private launches = 0;
  private readonly restarts: number[] = [];

  constructor(
    private readonly perHour = RESTARTS_PER_HOUR,
    private readonly maxLaunches = MAX_LAUNCHES,
  ) {}

  /** Counts the first launch. */
  launched(): void {
    this.launches++;
  }

  /** Takes one restart from the budget at `now` (ms) if there is one left; false when the device is done for. */
  takeRestart(now: number): boolean {
    while (this.restarts.length > 0 && now - (this.restarts[0] as number) >= HOUR_MS) this.restarts.shift();
    if (this.launches >= this.maxLaunches || this.restarts.length >= this.perHour) return false;
    this.restarts.push(now);
    this.launches++;
    return true;
  }

  /** Launches so far, the first included. */
  get used(): number {
    return this.launches;
  }
}
