/**
 * API.md §13: a managed device that gives way is killed and started again, at most three times in an hour (four
 * launches in all within that hour: the one before and three restarts); one that needs a fourth restart within
 * the hour stays `failed`. The hour is a rolling one: an emulator that crashes once a day is mended every day,
 * not failed on the fourth day (that would drain a long-running device host for good, which is what
 * self-healing is for). The budget counts only those healing restarts: the restart that resets a `-read-only`
 * instance between runs is routine and costs nothing.
 */
export const RESTARTS_PER_HOUR = 3;
const HOUR_MS = 3_600_000;

export class RestartBudget {
  private launches = 0;
  /** When the restarts of the last hour were taken (ms). */
  private readonly restarts: number[] = [];

  constructor(private readonly perHour = RESTARTS_PER_HOUR) {}

  /** Counts the first launch. */
  launched(): void {
    this.launches++;
  }

  /** Takes one restart from the budget at `now` (ms) if the last hour has one left; false: the device is failed. */
  takeRestart(now: number): boolean {
    while (this.restarts.length > 0 && now - (this.restarts[0] as number) >= HOUR_MS) this.restarts.shift();
    if (this.restarts.length >= this.perHour) return false;
    this.restarts.push(now);
    this.launches++;
    return true;
  }

  /** Launches so far, the first included. */
  get used(): number {
    return this.launches;
  }
}
