/**
 * One simulator the agent keeps (API.md §13 "Managed devices"): found by its Testbay name or created, started
 * clean (shut down, erased, booted, waited for with `bootstatus -b`), made clean again the same way after every
 * device run, and started again when it gives way: it does not boot, it vanished or crashed while idle, or
 * three runs in a row lost it. Restarts are rationed as for managed emulators (../restart-budget.ts: three in
 * any hour); one that needs a fourth within the hour is `failed` with simctl's last lines. Its operations run one
 * at a time, in the order they were asked for.
 */
import type { ToolResult } from "../../apple/xcrun.ts";
import type { ManagedDevice, ManagedDeviceState, ResetResult } from "../managed-device-pool.ts";
import { RESTARTS_PER_HOUR, RestartBudget } from "../restart-budget.ts";
import type { ListedSimulator } from "./listed-simulators.ts";
import { simctlTail } from "./simctl-tail.ts";
import type { ResolvedSimulatorSpec } from "./simulator-catalog.ts";
import { testbaySimulatorName } from "./testbay-simulator-name.ts";

/** What a managed simulator needs from its pool: simctl, the current listing, a clock, a log. */
export interface SimulatorHost {
  simctl(args: readonly string[], timeoutMs: number, signal?: AbortSignal): Promise<ToolResult>;
  /** `simctl list devices -j`, parsed; null when simctl could not say. */
  list(): Promise<ListedSimulator[] | null>;
  now(): number;
  log(message: string): void;
  /** A state changed: the agent offers the new set. */
  changed(): void;
}

/** Runs that lost the device in a row before it is restarted (API.md §13). */
export const FAILED_RUNS_BEFORE_RESTART = 3;

const timeouts = {
  create: 60_000,
  shutdown: 120_000,
  erase: 120_000,
  /** A first boot of a runtime builds its caches: minutes (as apple/ios-device.ts allows). */
  boot: 600_000,
};

type Attempt = { ok: true } | { ok: false; error: string };

export class ManagedSimulator {
  readonly name: string;
  private state: ManagedDeviceState = "booting";
  private error: string | null = null;
  /** How long its last boot took, `simctl boot` to `bootstatus -b` done (ms); null before the first. */
  private bootMs: number | null = null;
  private failedRunsInARow = 0;
  /** Why a restart is owed (three lost runs), taken by the next operation. */
  private restartDue: string | null = null;
  private readonly budget: RestartBudget;
  private queue: Promise<unknown> = Promise.resolve();
  private stopped = false;
  /** Whether this agent booted it: only then does stop() shut it down. */
  private bootedHere = false;

  constructor(
    private readonly resolved: ResolvedSimulatorSpec,
    instance: number,
    private udid: string | null,
    private readonly host: SimulatorHost,
  ) {
    this.name = testbaySimulatorName(resolved, instance);
    this.budget = new RestartBudget();
  }

  /** The UDID once it exists; its name until then (a simulator that could never be created is listed so). */
  get serial(): string {
    return this.udid ?? this.name;
  }

  get current(): ManagedDeviceState {
    return this.state;
  }

  device(): ManagedDevice {
    return {
      serial: this.serial,
      platform: "ios",
      model: this.resolved.deviceType.name,
      os_version: this.resolved.runtime.version,
      api_level: null,
      abi: null,
      pool: this.resolved.pool,
      state: this.state,
      error: this.error,
      boot_ms: this.bootMs,
    };
  }

  /** Starts it clean; resolves once it is idle or failed for good. */
  launch(): Promise<void> {
    return this.serially(async () => {
      this.budget.launched();
      const first = await this.cleanBoot();
      if (first.ok) this.ready();
      else await this.restartUntilReady(first.error);
    });
  }

  /** Makes it clean for the next run: shut down, erased, booted (API.md §13); the time it took is setup_ms. */
  reset(): Promise<ResetResult> {
    const started = this.host.now();
    // At once, not when its turn comes: the agent must not offer it again meanwhile.
    if (this.state === "idle" || this.state === "busy") this.setState("resetting");
    return this.serially(async () => {
      if (this.state === "failed" || this.stopped) return { setupMs: 0 };
      this.setState("resetting");
      const owed = this.restartDue;
      if (owed !== null) {
        await this.restartUntilReady(owed);
      } else {
        const attempt = await this.cleanBoot();
        if (attempt.ok) this.ready();
        else await this.restartUntilReady(attempt.error);
      }
      return { setupMs: this.host.now() - started };
    });
  }

  /** How the last run ended for the device; three lost in a row owe a restart. */
  runFinished(ok: boolean): void {
    if (ok) {
      this.failedRunsInARow = 0;
      return;
    }
    this.failedRunsInARow++;
    if (this.failedRunsInARow >= FAILED_RUNS_BEFORE_RESTART && this.restartDue === null) {
      this.restartDue = `it lost ${this.failedRunsInARow} runs in a row`;
      // Taken by the reset that follows a run; if none comes (the agent is between runs), on its own.
      setImmediate(() => {
        if (this.restartDue !== null && this.state === "idle") void this.restartNow();
      });
    }
  }

  /**
   * Compares an idle simulator with the current listing: one that is gone (deleted) or no longer Booted
   * (crashed, shut down by someone) is restarted.
   */
  watch(listed: readonly ListedSimulator[]): void {
    if (this.state !== "idle" || this.stopped || this.udid === null) return;
    const now = listed.find((s) => s.udid === this.udid);
    if (now && now.state === "Booted") return;
    this.restartDue = now ? `it was ${now.state} while idle` : "it vanished from simctl list devices";
    void this.restartNow();
  }

  /** Ends what it is doing and shuts it down if this agent booted it. */
  async stop(signal: AbortSignal): Promise<void> {
    this.stopped = true;
    await this.queue.catch(() => undefined);
    if (this.udid !== null && this.bootedHere) {
      const done = await this.host.simctl(["shutdown", this.udid], timeouts.shutdown, signal);
      if (!done.ok && !stateIs(done, "Shutdown"))
        this.host.log(`${this.label}: ${simctlTail("shutdown", done)}`);
      else this.host.log(`${this.label}: shut down`);
    }
  }

  private get label(): string {
    return `simulator "${this.name}"${this.udid ? ` (${this.udid})` : ""}`;
  }

  private restartNow(): Promise<void> {
    return this.serially(async () => {
      const owed = this.restartDue;
      if (owed === null || this.state !== "idle" || this.stopped) return;
      await this.restartUntilReady(owed);
    });
  }

  private serially<T>(operation: () => Promise<T>): Promise<T> {
    const run = this.queue.then(operation, operation);
    this.queue = run.catch(() => undefined);
    return run;
  }

  private async restartUntilReady(firstWhy: string): Promise<void> {
    let why = firstWhy;
    this.restartDue = null;
    for (;;) {
      if (this.stopped) return;
      if (!this.budget.takeRestart(this.host.now())) {
        this.fail(why);
        return;
      }
      this.host.log(
        `${this.label}: restarting (launch ${this.budget.used}; at most ${RESTARTS_PER_HOUR} restarts an hour): ${why.split("\n")[0]}`,
      );
      this.setState("booting");
      const attempt = await this.cleanBoot();
      if (attempt.ok) {
        this.failedRunsInARow = 0;
        this.ready();
        return;
      }
      why = attempt.error;
    }
  }

  /** Shut down (if it runs), erased, booted and waited for; created first when it does not exist. */
  private async cleanBoot(): Promise<Attempt> {
    const listed = await this.host.list();
    let found = this.udid === null ? undefined : listed?.find((s) => s.udid === this.udid);
    if (this.udid !== null && listed !== null && !found) {
      // Gone (deleted behind the agent's back): made again under its name, which costs a restart.
      this.host.log(`${this.label}: no longer listed by simctl; creating it again`);
      const gone = this.udid;
      this.udid = null;
      this.bootedHere = false;
      return { ok: false, error: `simulator ${gone} vanished from xcrun simctl list devices` };
    }
    if (this.udid === null) {
      const { deviceType, runtime } = this.resolved;
      const created = await this.run(
        ["create", this.name, deviceType.identifier, runtime.identifier],
        timeouts.create,
      );
      const udid = created.stdout.map((l) => l.trim()).find((l) => l !== "");
      if (!created.ok || udid === undefined) return { ok: false, error: simctlTail("create", created) };
      this.udid = udid;
      this.host.log(`${this.label}: created`);
      this.host.changed();
      found = undefined;
    }
    const udid = this.udid;
    // Unknown (simctl list failed) is shut down too: a "current state: Shutdown" refusal is no failure.
    if (found === undefined ? listed === null : found.state !== "Shutdown") {
      const down = await this.run(["shutdown", udid], timeouts.shutdown);
      if (!down.ok && !stateIs(down, "Shutdown")) return { ok: false, error: simctlTail("shutdown", down) };
    }
    const erased = await this.run(["erase", udid], timeouts.erase);
    if (!erased.ok) return { ok: false, error: simctlTail("erase", erased) };
    const launched = performance.now();
    const booted = await this.run(["boot", udid], timeouts.boot);
    if (!booted.ok && !stateIs(booted, "Booted")) return { ok: false, error: simctlTail("boot", booted) };
    this.bootedHere = true;
    const ready = await this.run(["bootstatus", udid, "-b"], timeouts.boot);
    if (!ready.ok) return { ok: false, error: simctlTail("bootstatus", ready) };
    this.bootMs = Math.round(performance.now() - launched);
    return { ok: true };
  }

  private run(args: readonly string[], timeoutMs: number): Promise<ToolResult> {
    return this.host.simctl(args, timeoutMs);
  }

  private ready(): void {
    this.error = null;
    this.setState("idle");
  }

  private fail(why: string): void {
    this.error = why;
    this.host.log(
      `${this.label}: failed after ${this.budget.used} launches (at most ${RESTARTS_PER_HOUR} restarts an hour): ${why.replaceAll("\n", " | ")}`,
    );
    this.setState("failed");
  }

  private setState(state: ManagedDeviceState): void {
    if (this.state === state) return;
    this.state = state;
    this.host.changed();
  }
}

/** simctl's refusal "Unable to … in current state: STATE" (CoreSimulator's 405). */
function stateIs(result: ToolResult, state: string): boolean {
  return result.stderr.some((l) => l.includes(`current state: ${state}`));
}
