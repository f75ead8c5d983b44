/**
 * A background round that runs when asked (a wake-up) and never twice at once. Asking while a round runs queues
 * one more round after it, however many ask meanwhile: that round sees everything they wanted done (the rows
 * they wrote before asking), so a burst of asks costs at most two rounds.
 */
export class CoalescedRound {
  private running: Promise<void> | undefined;
  private queued: Promise<void> | undefined;
  /** A woken round waiting for the gap since the last round's start (see wakeGapMs). */
  private delayed: { timer: NodeJS.Timeout; fired: Promise<void> } | undefined;
  private lastStartMs = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly round: () => Promise<unknown>,
    /** Where a failed round started by wake() goes (the log): it has no caller to tell. */
    private readonly onError: (error: unknown) => void,
    /**
     * A round woken sooner than this after the last one started waits out the rest. A signal after a quiet
     * spell starts a round at once; a stream of signals (every claim and completion of a busy instance) makes
     * a round per gap that takes everything since, instead of back-to-back rounds of one event each.
     */
    private readonly wakeGapMs = 0,
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
    // The queued (or delayed) round starts after everything already asked of it: one more would find nothing new.
    if (this.queued || this.delayed) return;
    const wait = this.lastStartMs + this.wakeGapMs - performance.now();
    if (wait <= 0) {
      this.run().catch(this.onError);
      return;
    }
    let fire = () => {};
    const fired = new Promise<void>((resolve) => {
      fire = resolve;
    });
    const timer = setTimeout(() => {
      this.delayed = undefined;
      this.run().catch(this.onError);
      fire();
    }, wait);
    this.delayed = { timer, fired };
  }

  /** Settles once no round runs, waits or is delayed (tests, and a close that wants the last round done). */
  async idle(): Promise<void> {
    for (;;) {
      const pending = this.delayed?.fired ?? this.queued ?? this.running;
      if (!pending) return;
      await pending.then(ignore, ignore);
    }
  }

  private start(): Promise<void> {
    this.lastStartMs = performance.now();
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
