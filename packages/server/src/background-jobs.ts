import type { FastifyBaseLogger } from "fastify";

/**
 * Every timer the server's features run in the background (housekeeping, backstop polls, the lease sweep),
 * started by the features' start() and all stopped in one place when the server closes (app.ts).
 */
export class BackgroundJobs {
  private readonly timers: NodeJS.Timeout[] = [];

  constructor(private readonly log: FastifyBaseLogger) {}

  /**
   * Runs a job every `intervalMs` while the server runs, never two at once. The job is safe to run on
   * several instances; a failure is logged and the next round tries again.
   */
  every(name: string, intervalMs: number, job: () => Promise<unknown>): void {
    let running = false;
    const timer = setInterval(() => {
      if (running) return;
      running = true;
      job()
        .catch((error) => this.log.error({ job: name, err: error }, "background job failed"))
        .finally(() => {
          running = false;
        });
    }, intervalMs);
    timer.unref();
    this.timers.push(timer);
  }

  /**
   * Runs a housekeeping job now and every hour while the server runs. Jobs are idempotent, so several
   * instances running them is harmless; a failure is logged and retried at the next hour.
   */
  async hourly(name: string, job: () => Promise<unknown>): Promise<void> {
    const run = () =>
      job().then(
        (result) => this.log.debug({ job: name, result }, "housekeeping done"),
        (error) => this.log.error({ job: name, err: error }, "housekeeping failed"),
      );
    await run();
    const timer = setInterval(run, 3600 * 1000);
    timer.unref();
    this.timers.push(timer);
  }

  /** Stops every timer; a job running now finishes on its own. */
  stop(): void {
    for (const timer of this.timers) clearInterval(timer);
  }
}
