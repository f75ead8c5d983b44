/**
 * One iOS device as a step drives it: a simulator through `xcrun simctl` or a physical device through
 * `xcrun devicectl`. Both install and uninstall the app; a simulator is also booted (and waited for with
 * `bootstatus -b`, which returns once SpringBoard is up), erased, and asked whether it is still there, which
 * tells a lost device (an infrastructure error) from a failure of the app or its tests.
 */
import { readFile, rm } from "node:fs/promises";
import path from "node:path";
import { parseDevicectlDevices, parseSimctlDevices, type SimulatorState } from "./apple-devices.ts";
import { lastLine, type ToolResult, type XcodeTools } from "./xcrun.ts";

const shortMs = 120_000;
/** A first boot of a new runtime builds its caches: minutes, not seconds. */
const bootMs = 600_000;

export type IosDeviceKind = "simulator" | "physical";

export type Done = { ok: true } | { ok: false; message: string; lost: boolean };

export class IosDevice {
  constructor(
    readonly udid: string,
    readonly kind: IosDeviceKind,
    private readonly tools: XcodeTools,
    private readonly scratchDir: string,
  ) {}

  /** Finds which kind of device `udid` is; null when neither simctl nor devicectl lists it. */
  static async find(udid: string, tools: XcodeTools, scratchDir: string): Promise<IosDevice | null> {
    const simulators = await tools.listSimulators();
    if ("json" in simulators && parseSimctlDevices(simulators.json).some((s) => s.udid === udid)) {
      return new IosDevice(udid, "simulator", tools, scratchDir);
    }
    const physical = await listPhysicalDevices(tools, scratchDir);
    if (physical.some((d) => d.udid === udid)) return new IosDevice(udid, "physical", tools, scratchDir);
    return null;
  }

  /** The simulator's state ("Booted", "Shutdown", …), "gone" when it is not listed, null when unknown. */
  async simulatorState(): Promise<SimulatorState | "gone" | null> {
    const listed = await this.tools.listSimulators();
    if ("error" in listed) return null;
    return parseSimctlDevices(listed.json).find((s) => s.udid === this.udid)?.state ?? "gone";
  }

  /**
   * Whether the device can still run tests: a simulator that is Booted, a physical device devicectl lists.
   * A simulator that crashed is Shutdown (or gone): that is the infrastructure error of API.md §7.
   */
  async present(): Promise<boolean> {
    if (this.kind === "physical") {
      return (await listPhysicalDevices(this.tools, this.scratchDir)).some((d) => d.udid === this.udid);
    }
    const state = await this.simulatorState();
    // Unknown (simctl itself failed) is not taken for a lost device: the run's own result decides.
    return state === null || state === "Booted";
  }

  /** Boots a simulator that is not booted and waits until it can take an install. Nothing for a device. */
  async boot(): Promise<Done> {
    if (this.kind === "physical") return { ok: true };
    const state = await this.simulatorState();
    if (state === "gone") return { ok: false, message: `simulator ${this.udid} is gone`, lost: true };
    if (state !== "Booted" && state !== "Booting") {
      const booted = await this.tools.xcrun(["simctl", "boot", this.udid], bootMs);
      // Booted in the meantime by someone else: that is what we wanted.
      if (!booted.ok && !booted.stderr.some((l) => l.includes("current state: Booted"))) {
        return this.failed("simctl boot", booted);
      }
    }
    const waited = await this.tools.xcrun(["simctl", "bootstatus", this.udid, "-b"], bootMs);
    return waited.ok ? { ok: true } : this.failed("simctl bootstatus", waited);
  }

  /** Erases a shut down simulator (all content and settings): clear_package_data before it is booted. */
  async erase(): Promise<Done> {
    const erased = await this.tools.xcrun(["simctl", "erase", this.udid], shortMs);
    return erased.ok ? { ok: true } : this.failed("simctl erase", erased);
  }

  async install(app: string): Promise<Done> {
    const args =
      this.kind === "simulator"
        ? ["simctl", "install", this.udid, app]
        : ["devicectl", "device", "install", "app", "--device", this.udid, app];
    const installed = await this.tools.xcrun(args, bootMs);
    return installed.ok ? { ok: true } : this.failed(`install of ${path.basename(app)}`, installed);
  }

  /** Removes the app and its data; an app that is not installed is not an error (there is nothing to clear). */
  async uninstall(bundleId: string): Promise<Done> {
    const args =
      this.kind === "simulator"
        ? ["simctl", "uninstall", this.udid, bundleId]
        : ["devicectl", "device", "uninstall", "app", "--device", this.udid, bundleId];
    const removed = await this.tools.xcrun(args, shortMs);
    return removed.ok ? { ok: true } : this.failed(`uninstall of ${bundleId}`, removed);
  }

  private async failed(what: string, result: ToolResult): Promise<Done> {
    const message = `${what} failed: ${lastLine(result)}`;
    if (result.aborted) return { ok: false, message, lost: false };
    return { ok: false, message, lost: !(await this.present()) };
  }
}

/** `xcrun devicectl list devices --json-output FILE` (devicectl writes its JSON to a file, not stdout). */
export async function listPhysicalDevices(tools: XcodeTools, scratchDir: string) {
  const file = path.join(scratchDir, `devicectl-${process.pid}-${Date.now()}-${Math.random()}.json`);
  try {
    const listed = await tools.xcrun(
      ["devicectl", "list", "devices", "--json-output", file],
      30_000,
      "quiet",
    );
    if (!listed.ok) return [];
    return parseDevicectlDevices(JSON.parse(await readFile(file, "utf8")));
  } catch {
    return [];
  } finally {
    await rm(file, { force: true });
  }
}
