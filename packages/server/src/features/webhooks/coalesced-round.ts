/**
 * A background round that runs when asked (a wake-up) and never twice at once. Asking while a round runs queues
 * one more round after it, however many ask meanwhile: that round sees everything they wanted done (the rows
 * they wrote before asking), so a burst of asks costs at most two rounds.
 */
export class CoalescedRound {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;

  constructor(
    private readonly round: () => Promise<unknown>,
    /** Where a failed round started by wake() goes (the log): it has no caller to tell. */
    private readonly onError: (error: unknown) => void,
  ) {}

  /** Runs a round now, or once after the one running; settles when that round has ended. */
  run(): Promise<void> {
    if (this.queued) return this.queued;
    const current = this.running;
    if (!current) return this.start();
    this.queued = current.then(ignore, ignore).then(() => {
      this.queued = undefined;
      return this.start();
    });
    return this.queued;
  }

  /** run() without waiting: for signals (an event appended, deliveries inserted). */
  wake(): void {
    // The queued round starts after everything already asked of it: one more would find nothing new.
    if (this.queued) return;
    this.run().catch(this.onError);
  }

  /** Settles once no round runs or waits (tests, and a close that wants the last round done). */
  async idle(): Promise<void> {
    while (this.queued ?? this.running) await (this.queued ?? this.running)?.then(ignore, ignore);
  }

  private start(): Promise<void> {
    // A round that throws before its first await fails like one that rejects.
    const started: Promise<void> = new Promise((resolve) => resolve(this.round()))
      .then(ignore)
      .finally(() => {
        if (this.running === started) this.running = undefined;
      });
    this.running = started;
    return started;
  }
}

function ignore(): void {}
