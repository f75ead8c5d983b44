import { setTimeout as sleep } from "node:timers/promises";
import { machineCpuSeconds } from "./cpu.ts";

/**
 * Before each measured run, waits for the rest of the machine to go quiet (a test suite elsewhere on a
 * two-core machine halves a baseline), within a time budget for the whole benchmark so a busy machine
 * slows a run down by a bounded amount and never stalls it.
 */
export class QuietGate {
  private spentMs = 0;
  /** Runs that started although the machine was still busy. */
  gaveUp = 0;

  constructor(
    /** Busy above this, in % of one core, counts as not quiet. Idle benchmark servers use ~0. */
    readonly thresholdPercent: number,
    /** Most time to wait over the whole benchmark. */
    readonly budgetMs: number,
    private readonly sampleMs = 500,
  ) {}

  get waitedSeconds(): number {
    return this.spentMs / 1000;
  }

  /** Resolves when a sample window was quiet, or the budget is spent. */
  async wait(): Promise<void> {
    for (;;) {
      const before = machineCpuSeconds();
      if (before === undefined) return;
      const start = performance.now();
      await sleep(this.sampleMs);
      const elapsed = performance.now() - start;
      this.spentMs += elapsed;
      const busyPercent = (((machineCpuSeconds() ?? before) - before) / (elapsed / 1000)) * 100;
      if (busyPercent <= this.thresholdPercent) return;
      if (this.spentMs >= this.budgetMs) {
        this.gaveUp++;
        return;
      }
    }
  }
}
