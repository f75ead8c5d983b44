/**
 * `--emulator AVD[=N]` (API.md §13): the agent's own Android emulators. Per AVD a clean snapshot is made once
 * (clean-snapshot.ts), then N instances start from it on their own even ports (`-read-only` when N > 1), boot
 * (wait-for-boot.ts) and are offered. After each run an instance is reset: a writable one loads the snapshot
 * (`emu avd snapshot load`), a read-only one, which refuses snapshot commands, is restarted from it; a boot that
 * fails after that is retried with `-wipe-data` as the last resort. An instance that does not boot, exits on its
 * own or gives way in three runs in a row is killed and started again within its restart budget
 * (restart-budget.ts); past it, it is `failed` with the emulator's last lines as `error`.
 */
import { execFile } from "node:child_process";
import { parseGetprop } from "../devices/getprop.ts";
import { CLEAN_SNAPSHOT, makeCleanSnapshot } from "./clean-snapshot.ts";
import { adbCall, consoleRefusal } from "./emulator-adb.ts";
import type { EmulatorRequest } from "./emulator-option.ts";
import { emulatorPort, pickPorts } from "./emulator-ports.ts";
import { EmulatorProcess } from "./emulator-process.ts";
import type {
  ManagedDevice,
  ManagedDevicePool,
  ManagedDeviceState,
  ResetResult,
} from "./managed-device-pool.ts";
import { RestartBudget } from "./restart-budget.ts";
import { waitForBoot } from "./wait-for-boot.ts";

export interface ManagedEmulatorsOptions {
  requests: readonly EmulatorRequest[];
  env: NodeJS.ProcessEnv;
  log: (message: string) => void;
  /** How long a boot may take (API.md §13: 300 s). */
  bootTimeoutMs?: number;
  /** How often sys.boot_completed is read while an instance boots; 500 ms by default. */
  pollMs?: number;
  /**
   * How often an idle instance is asked whether it is still a device (`adb get-state`); 10 s by default. Two
   * answers in a row that it is not (offline, gone) restart it.
   */
  healthCheckMs?: number;
  now?: () => number;
}

/** Runs in a row in which the device gave way before it is restarted (API.md §13). */
const FAILED_RUNS_BEFORE_RESTART = 3;

interface Facts {
  model: string;
  os_version: string;
  api_level: number | null;
  abi: string | null;
}

/** One instance of an AVD: its port is its own for as long as the agent runs, whatever process holds it. */
interface Slot {
  avd: string;
  port: number;
  serial: string;
  readOnly: boolean;
  state: ManagedDeviceState;
  error: string | null;
  process: EmulatorProcess | null;
  facts: Facts | null;
  budget: RestartBudget;
  failedRunsInARow: number;
  /** The boot or heal under way; a reset waits for it. */
  settling: Promise<void> | null;
  /** Health checks in a row that found the idle instance not a device. */
  offlineChecks: number;
  /** How long its last boot took, launch to sys.boot_completed (ms); null before the first. */
  bootMs: number | null;
}

export class ManagedEmulators implements ManagedDevicePool {
  private readonly slots: Slot[] = [];
  private readonly processes = new Set<EmulatorProcess>();
  private readonly listeners: Array<() => void> = [];
  /** AVDs whose clean snapshot could not be made: their instances cold-boot with -wipe-data instead. */
  private readonly withoutSnapshot = new Set<string>();
  private stopping = false;
  private healthTimer: NodeJS.Timeout | undefined;
  private readonly bootTimeoutMs: number;
  private readonly pollMs: number;
  private readonly now: () => number;

  constructor(private readonly options: ManagedEmulatorsOptions) {
    this.bootTimeoutMs = options.bootTimeoutMs ?? 300_000;
    this.pollMs = options.pollMs ?? 500;
    this.now = options.now ?? Date.now;
  }

  async start(): Promise<void> {
    const { env, log, requests } = this.options;
    const known = await listAvds(env);
    const missing = requests.filter((r) => !known.includes(r.avd)).map((r) => r.avd);
    if (missing.length > 0) {
      throw new Error(
        `no AVD named ${missing.join(", ")} (emulator -list-avds knows ${known.join(", ") || "none"}); create it with avdmanager create avd or name one of those`,
      );
    }
    const listed = await adbCall(["devices"], { env, timeoutMs: 10_000 });
    const taken = listed.stdout
      .split("\n")
      .map((line) => emulatorPort(line.split(/\s+/)[0] ?? ""))
      .filter((port): port is number => port !== null);
    const total = requests.reduce((sum, r) => sum + r.instances, 0);
    const ports = pickPorts(total, taken);
    for (const request of requests) {
      for (let i = 0; i < request.instances; i++) {
        const port = ports.shift() as number;
        this.slots.push({
          avd: request.avd,
          port,
          serial: `emulator-${port}`,
          readOnly: request.instances > 1,
          state: "booting",
          error: null,
          process: null,
          facts: null,
          budget: new RestartBudget(),
          failedRunsInARow: 0,
          settling: null,
          offlineChecks: 0,
          bootMs: null,
        });
      }
    }
    this.changed();
    this.scheduleHealthCheck();
    await Promise.all(
      requests.map(async (request) => {
        const slots = this.slots.filter((s) => s.avd === request.avd);
        const first = slots[0] as Slot;
        log(`emulator ${request.avd}: making the clean snapshot ${CLEAN_SNAPSHOT} on ${first.serial}`);
        const why = await makeCleanSnapshot({
          avd: request.avd,
          port: first.port,
          env,
          bootTimeoutMs: this.bootTimeoutMs,
          pollMs: this.pollMs,
          track: (p) => this.track(p),
        });
        if (this.stopping) return;
        if (why !== null) {
          this.withoutSnapshot.add(request.avd);
          log(
            `emulator ${request.avd}: no clean snapshot (${why}); its instances cold-boot with -wipe-data instead`,
          );
        }
        await Promise.all(
          slots.map((slot) => {
            slot.budget.launched();
            return this.settle(slot, () => this.boot(slot, { wipeData: why !== null }));
          }),
        );
      }),
    );
  }

  devices(): ManagedDevice[] {
    return this.slots.map((slot) => ({
      serial: slot.serial,
      platform: "android",
      model: slot.facts?.model ?? slot.avd,
      os_version: slot.facts?.os_version ?? "unknown",
      api_level: slot.facts?.api_level ?? null,
      abi: slot.facts?.abi ?? null,
      pool: slot.avd,
      state: slot.state,
      error: slot.error,
      boot_ms: slot.bootMs,
    }));
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  runFinished(serial: string, ok: boolean): void {
    const slot = this.slot(serial);
    if (!slot) return;
    slot.failedRunsInARow = ok ? 0 : slot.failedRunsInARow + 1;
  }

  async reset(serial: string): Promise<ResetResult> {
    const slot = this.slot(serial);
    if (!slot) return { setupMs: 0 };
    const started = this.now();
    // A crash mid-run is being healed already: the reset is that restart.
    if (slot.settling) await slot.settling;
    if (slot.state === "failed" || this.stopping) return { setupMs: this.now() - started };
    this.setState(slot, "resetting");
    if (slot.failedRunsInARow >= FAILED_RUNS_BEFORE_RESTART) {
      slot.failedRunsInARow = 0;
      await this.settle(slot, () =>
        this.heal(slot, `gave way in ${FAILED_RUNS_BEFORE_RESTART} runs in a row`),
      );
    } else {
      await this.settle(slot, () => this.resetInstance(slot));
    }
    return { setupMs: this.now() - started };
  }

  async stop(): Promise<void> {
    this.stopping = true;
    clearTimeout(this.healthTimer);
    await Promise.all([...this.processes].map((p) => p.stop()));
  }

  /** API.md §13: an instance that goes offline (or leaves adb) while idle is killed and started again. */
  private scheduleHealthCheck(): void {
    if (this.stopping) return;
    this.healthTimer = setTimeout(() => {
      void this.checkHealth().finally(() => this.scheduleHealthCheck());
    }, this.options.healthCheckMs ?? 10_000);
    this.healthTimer.unref();
  }

  private async checkHealth(): Promise<void> {
    await Promise.all(
      this.slots
        .filter((slot) => slot.state === "idle" && !slot.settling && slot.process?.running)
        .map(async (slot) => {
          const said = await adbCall(["-s", slot.serial, "get-state"], {
            env: this.options.env,
            timeoutMs: 10_000,
          });
          if (said.ok && said.stdout.trim() === "device") {
            slot.offlineChecks = 0;
            return;
          }
          slot.offlineChecks++;
          // A run may have taken the device meanwhile; its end decides then (runFinished, reset).
          if (slot.offlineChecks < 2 || slot.state !== "idle" || slot.settling) return;
          slot.offlineChecks = 0;
          const why = said.text.split("\n").at(-1) || "not a device";
          this.setState(slot, "booting");
          await this.settle(slot, () => this.heal(slot, `went offline (${why})`));
        }),
    );
  }

  /** Loads the clean snapshot where the emulator allows it, else restarts the instance from it. */
  private async resetInstance(slot: Slot): Promise<void> {
    const { env, log } = this.options;
    if (!slot.readOnly && !this.withoutSnapshot.has(slot.avd) && slot.process?.running) {
      const loaded = await adbCall(["-s", slot.serial, "emu", "avd", "snapshot", "load", CLEAN_SNAPSHOT], {
        env,
        timeoutMs: this.bootTimeoutMs,
      });
      const refused = consoleRefusal(loaded);
      if (refused === null && (await waitForBoot(slot.process, this.bootWait())) === "booted") {
        this.setState(slot, "idle");
        return;
      }
      log(
        `emulator ${slot.serial}: snapshot load refused or not booted (${refused ?? "no boot"}); restarting it`,
      );
    }
    // A -read-only instance refuses snapshot commands (API.md §13): it starts again from the snapshot instead.
    await this.kill(slot);
    if (await this.boot(slot, { wipeData: this.withoutSnapshot.has(slot.avd) })) return;
    // The last resort: a cold boot with the user data wiped, which costs a restart of the budget.
    await this.heal(slot, "did not boot again from the clean snapshot");
  }

  /** Kills the instance and starts it again, with -wipe-data when a boot from the snapshot just failed. */
  private async heal(slot: Slot, why: string): Promise<void> {
    const { log } = this.options;
    let reason = why;
    for (;;) {
      if (this.stopping) return;
      const lastWords = slot.process?.output.text() ?? "";
      await this.kill(slot);
      if (!slot.budget.takeRestart(this.now())) {
        slot.error = lastWords || reason;
        log(
          `emulator ${slot.serial} (${slot.avd}) failed: ${reason}; ${slot.budget.used} launches used, no more restarts this hour. Its last output:\n${slot.error}`,
        );
        this.setState(slot, "failed");
        return;
      }
      log(`emulator ${slot.serial} (${slot.avd}) ${reason}: restarting it (launch ${slot.budget.used})`);
      const coldBoot = /boot/.test(reason) || this.withoutSnapshot.has(slot.avd);
      if (await this.boot(slot, { wipeData: coldBoot })) return;
      reason = "did not boot";
    }
  }

  /** Starts the slot's instance and waits for its boot; true once it is idle. */
  private async boot(slot: Slot, how: { wipeData: boolean }): Promise<boolean> {
    if (this.stopping) return false;
    const instance = new EmulatorProcess(
      {
        avd: slot.avd,
        port: slot.port,
        readOnly: slot.readOnly,
        ...(this.withoutSnapshot.has(slot.avd) ? {} : { snapshot: CLEAN_SNAPSHOT }),
        wipeData: how.wipeData,
      },
      this.options.env,
    );
    slot.process = instance;
    this.track(instance);
    this.setState(slot, slot.state === "resetting" ? "resetting" : "booting");
    const launched = performance.now();
    const outcome = await waitForBoot(instance, this.bootWait());
    if (outcome !== "booted" || this.stopping) return false;
    slot.bootMs = Math.round(performance.now() - launched);
    slot.facts ??= await readFacts(slot.serial, this.options.env);
    slot.error = null;
    this.setState(slot, "idle");
    // An instance that exits on its own from now on (a crash) is healed at once.
    instance.exited.then((exit) => {
      if (slot.process !== instance || this.stopping) return;
      const how = exit.signal ? `signal ${exit.signal}` : `code ${exit.code}`;
      this.options.log(`emulator ${slot.serial} (${slot.avd}) exited with ${how}`);
      void this.settle(slot, () => this.heal(slot, `exited with ${how}`));
    });
    return true;
  }

  /** Runs a boot or heal as the slot's one piece of work under way, which resets wait for. */
  private async settle(slot: Slot, work: () => Promise<unknown>): Promise<void> {
    const previous = slot.settling;
    if (previous) await previous;
    const run = (async () => {
      const booted = await work();
      // A first boot that failed goes through the same restarts as any other.
      if (booted === false && slot.state !== "idle" && slot.state !== "failed")
        await this.heal(slot, "did not boot");
    })();
    slot.settling = run;
    try {
      await run;
    } finally {
      if (slot.settling === run) slot.settling = null;
    }
  }

  private async kill(slot: Slot): Promise<void> {
    const instance = slot.process;
    slot.process = null;
    if (instance) {
      if (instance.running) {
        // adb's own stop first (the console's kill), SIGTERM after it if the console does not answer.
        await adbCall(["-s", instance.serial, "emu", "kill"], { env: this.options.env, timeoutMs: 5000 });
      }
      await instance.stop();
    }
  }

  private track(instance: EmulatorProcess): void {
    this.processes.add(instance);
    instance.exited.then(() => this.processes.delete(instance));
  }

  private bootWait() {
    return { env: this.options.env, bootTimeoutMs: this.bootTimeoutMs, pollMs: this.pollMs };
  }

  private slot(serial: string): Slot | undefined {
    return this.slots.find((s) => s.serial === serial);
  }

  private setState(slot: Slot, state: ManagedDeviceState): void {
    if (slot.state === state) return;
    slot.state = state;
    this.changed();
  }

  private changed(): void {
    for (const listener of this.listeners) listener();
  }
}

/** `emulator -list-avds`: the AVDs this host has; an emulator that cannot be run is the operator's to mend. */
function listAvds(env: NodeJS.ProcessEnv): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile("emulator", ["-list-avds"], { env, timeout: 30_000 }, (error, stdout) => {
      if (error) {
        reject(
          new Error(
            `cannot run emulator -list-avds (${error.message.split("\n")[0]}): put the Android SDK's emulator folder on PATH`,
          ),
        );
      } else {
        resolve(
          stdout
            .split("\n")
            .map((line) => line.trim())
            .filter((line) => /^[A-Za-z0-9._-]+$/.test(line)),
        );
      }
    });
  });
}

async function readFacts(serial: string, env: NodeJS.ProcessEnv): Promise<Facts | null> {
  const dump = await adbCall(["-s", serial, "shell", "getprop"], { env, timeoutMs: 10_000 });
  if (!dump.ok) return null;
  const props = parseGetprop(dump.stdout);
  const sdk = Number(props.get("ro.build.version.sdk"));
  return {
    model: props.get("ro.product.model") || "unknown",
    os_version: props.get("ro.build.version.release") || "unknown",
    api_level: Number.isInteger(sdk) && sdk > 0 ? sdk : null,
    abi: props.get("ro.product.cpu.abi") || null,
  };
}
