/**
 * `--simulator "DEVICE_TYPE@OS[=N]"` as a ManagedDevicePool (../managed-device-pool.ts, API.md §13): at start
 * each spec is matched to this Xcode's device types and runtimes (a mismatch refuses the start, naming what is
 * installed), its N simulators are found by their Testbay names or created, and all are booted clean at once.
 * The pool then resets a simulator after each run, looks every few seconds for idle ones that vanished or
 * stopped, and on stop shuts down those it booted. Simulators with other names are never touched.
 */
import { XcodeTools } from "../../apple/xcrun.ts";
import type { ManagedDevice, ManagedDevicePool, ResetResult } from "../managed-device-pool.ts";
import { type ListedSimulator, parseListedSimulators } from "./listed-simulators.ts";
import { ManagedSimulator, type SimulatorHost } from "./managed-simulator.ts";
import { simctlTail } from "./simctl-tail.ts";
import { parseDeviceTypes, parseRuntimes, resolveSimulatorSpec } from "./simulator-catalog.ts";
import type { SimulatorSpec } from "./simulator-spec.ts";

export interface ManagedSimulatorsOptions {
  specs: readonly SimulatorSpec[];
  /** Where simctl runs (its working directory). */
  workDir: string;
  /** The environment xcrun runs with (PATH decides which one); the agent's own by default. */
  env?: NodeJS.ProcessEnv;
  log: (message: string) => void;
  /** How often idle simulators are checked (ms; 0: never). 5000 by default, as the agent's device refresh. */
  watchMs?: number;
  now?: () => number;
}

export class ManagedSimulators implements ManagedDevicePool {
  private simulators: ManagedSimulator[] = [];
  private readonly abort = new AbortController();
  private readonly tools: XcodeTools;
  private readonly listeners: Array<() => void> = [];
  private watchTimer: NodeJS.Timeout | undefined;
  private watching = false;

  constructor(private readonly options: ManagedSimulatorsOptions) {
    this.tools = new XcodeTools({
      workDir: options.workDir,
      signal: this.abort.signal,
      ...(options.env ? { env: options.env } : {}),
    });
  }

  async start(): Promise<void> {
    const [typesJson, runtimesJson] = await Promise.all([
      this.listJson("devicetypes"),
      this.listJson("runtimes"),
    ]);
    const deviceTypes = parseDeviceTypes(typesJson);
    const runtimes = parseRuntimes(runtimesJson);
    const resolved = this.options.specs.map((spec) => resolveSimulatorSpec(spec, deviceTypes, runtimes));
    const pools = new Map<string, string>();
    for (const r of resolved) {
      const earlier = pools.get(r.pool);
      if (earlier !== undefined) {
        throw new Error(
          `--simulator "${earlier}" and --simulator "${r.spec.given}" both ask for ${r.pool}: give it once, with =N for more than one`,
        );
      }
      pools.set(r.pool, r.spec.given);
    }
    const listed = (await this.list()) ?? [];
    const host = this.host();
    for (const r of resolved) {
      let found = 0;
      for (let k = 1; k <= r.spec.count; k++) {
        const simulator = new ManagedSimulator(r, k, null, host);
        const existing = listed.find(
          (s) =>
            s.name === simulator.name &&
            s.runtime === r.runtime.identifier &&
            s.deviceTypeIdentifier === r.deviceType.identifier &&
            s.isAvailable,
        );
        if (existing) found++;
        this.simulators.push(existing ? new ManagedSimulator(r, k, existing.udid, host) : simulator);
      }
      this.options.log(
        `--simulator ${r.pool}: ${r.spec.count} simulator${r.spec.count === 1 ? "" : "s"} (${found} found, ${r.spec.count - found} to create)`,
      );
    }
    await Promise.all(this.simulators.map((s) => s.launch()));
    const watchMs = this.options.watchMs ?? 5_000;
    if (watchMs > 0) {
      this.watchTimer = setInterval(() => void this.watch(), watchMs);
      this.watchTimer.unref();
    }
  }

  devices(): ManagedDevice[] {
    return this.simulators.map((s) => s.device());
  }

  reset(serial: string): Promise<ResetResult> {
    const simulator = this.simulators.find((s) => s.serial === serial);
    return simulator ? simulator.reset() : Promise.resolve({ setupMs: 0 });
  }

  runFinished(serial: string, ok: boolean): void {
    this.simulators.find((s) => s.serial === serial)?.runFinished(ok);
  }

  onChange(listener: () => void): void {
    this.listeners.push(listener);
  }

  async stop(): Promise<void> {
    clearInterval(this.watchTimer);
    this.abort.abort();
    // The shutdowns need a signal of their own: the pool's is what just ended everything under way.
    const shutdowns = new AbortController().signal;
    await Promise.all(this.simulators.map((s) => s.stop(shutdowns)));
  }

  private host(): SimulatorHost {
    return {
      simctl: (args, timeoutMs, signal) =>
        this.tools.run(
          "xcrun",
          ["simctl", ...args],
          timeoutMs,
          "quiet",
          undefined,
          signal ?? this.abort.signal,
        ),
      list: () => this.list(),
      now: this.options.now ?? Date.now,
      log: this.options.log,
      changed: () => {
        for (const listener of this.listeners) listener();
      },
    };
  }

  private async watch(): Promise<void> {
    if (this.watching || this.abort.signal.aborted) return;
    this.watching = true;
    try {
      const listed = await this.list();
      if (listed !== null) for (const s of this.simulators) s.watch(listed);
    } finally {
      this.watching = false;
    }
  }

  private async list(): Promise<ListedSimulator[] | null> {
    const listed = await this.tools.listSimulators();
    return "json" in listed ? parseListedSimulators(listed.json) : null;
  }

  /** `simctl list devicetypes|runtimes -j`; a simctl that cannot answer is a host without Xcode: no start. */
  private async listJson(what: "devicetypes" | "runtimes"): Promise<unknown> {
    const listed = await this.tools.run("xcrun", ["simctl", "list", what, "-j"], 60_000, "quiet");
    if (!listed.ok) {
      throw new Error(
        `--simulator needs Xcode's simctl, which could not list ${what}: ${simctlTail(`list ${what}`, listed).replaceAll("\n", " ")}. Install Xcode and select it (sudo xcode-select -s /Applications/Xcode.app).`,
      );
    }
    try {
      return JSON.parse(listed.stdout.join("\n"));
    } catch {
      throw new Error(`--simulator: xcrun simctl list ${what} -j printed no JSON`);
    }
  }
}
