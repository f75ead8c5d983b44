/**
 * The devices an agent starts and looks after itself (API.md §13 "Managed devices"): `--emulator AVD[=N]`
 * (managed/managed-emulators.ts) and `--simulator "DEVICE_TYPE@OS[=N]"` (managed/simulators/). The agent's
 * runtime (runtime/agent.ts) knows only this interface: it offers a pool's ready devices beside the ones it
 * found, asks the pool to reset a device after each run on it, tells it how the run went, and stops it on
 * SIGTERM. Everything else (booting, clean snapshots, restarting a device that gave way) is the pool's own.
 */

/** API.md §13 "What a device is": a managed device's state, as claims and GET /agents show it. */
export type ManagedDeviceState = "booting" | "idle" | "busy" | "resetting" | "drained" | "failed";

/** One device of a pool, as the agent offers it and describes it in claims. */
export interface ManagedDevice {
  /** adb's serial (`emulator-5554`) or the simulator's UDID: what steps are given to reach it. */
  serial: string;
  platform: "android" | "ios";
  /** As the device names itself (getprop ro.product.model; the simulator's device type name). */
  model: string;
  os_version: string;
  /** Android's ro.build.version.sdk; null for iOS or when not read yet. */
  api_level: number | null;
  /** ro.product.cpu.abi; null when not known. */
  abi: string | null;
  /** The AVD or the device type this device is an instance of. */
  pool: string;
  /**
   * `booting` until it can take a run, `idle` when it can, `resetting` after a run, `failed` once its restart
   * budget is spent. The pool need not track `busy`: the agent knows which devices hold a job and says so.
   */
  state: ManagedDeviceState;
  /** Why, when `failed` (the tool's last lines of output) or `drained`; null otherwise. */
  error: string | null;
  /** How long its last boot took, from launch to ready (ms), for the Agents page; null before the first. */
  boot_ms: number | null;
}

/** What a reset between two runs cost: reported on the next device run as `setup_ms`. */
export interface ResetResult {
  setupMs: number;
}

export interface ManagedDevicePool {
  /**
   * Starts every device the options ask for and resolves once each one has booted or failed for good. A
   * device that fails does not reject this: it is listed `failed` with its error. Rejects only for a mistake
   * the operator must mend before anything can start (the tool missing, an unknown AVD or device type).
   */
  start(): Promise<void>;
  /** Every device of the pool with its current state, in a stable order (by pool, then instance). */
  devices(): ManagedDevice[];
  /**
   * Makes `serial` clean again after a run (nothing the run installed or wrote is left) and resolves when it
   * can take the next run. While it resets, the device is `resetting` and not offered. A device that cannot
   * be reset is restarted (within its restart budget) or becomes `failed`; this still resolves.
   */
  reset(serial: string): Promise<ResetResult>;
  /**
   * How the run on `serial` ended for the device: `ok` false when the device itself gave way (adb lost it,
   * it crashed), not when tests failed. Three in a row restart it (API.md §13).
   */
  runFinished(serial: string, ok: boolean): void;
  /**
   * Called whenever a device's state changes, so the agent offers the new set at once. Optional: without it the
   * agent reads devices() at each device refresh (every few seconds).
   */
  onChange?(listener: () => void): void;
  /** Stops every device this pool started (and nothing else); resolves when they are gone. */
  stop(): Promise<void>;
}
