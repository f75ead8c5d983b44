/**
 * API.md §7: a device that fails three runs in a row is drained (not offered) until the agent restarts.
 * A run fails *for the device* only when the device itself gave way (adb lost it mid-run); a failing
 * test or a plan's own error says nothing about the device, and any such ending clears the count.
 */
import type { Device } from "../steps/step-types.ts";

/** The JobResult reason the job runner gives when adb lost the device during the run. */
export const DEVICE_LOST = "device_lost";

export const DRAIN_AFTER = 3;

export class DeviceHealth {
  private readonly failuresInARow = new Map<string, number>();
  private readonly drainedDevices = new Map<string, Device>();

  constructor(private readonly drainAfter = DRAIN_AFTER) {}

  /**
   * Counts one finished run on `device`. Returns true when this run drained it (once per device: later
   * runs cannot happen, since a drained device is not offered).
   */
  record(device: Device, result: { reason: string | null }): boolean {
    if (this.drainedDevices.has(device.serial)) return false;
    if (result.reason !== DEVICE_LOST) {
      this.failuresInARow.delete(device.serial);
      return false;
    }
    const failures = (this.failuresInARow.get(device.serial) ?? 0) + 1;
    this.failuresInARow.set(device.serial, failures);
    if (failures < this.drainAfter) return false;
    this.failuresInARow.delete(device.serial);
    this.drainedDevices.set(device.serial, {
      serial: device.serial,
      platform: device.platform,
      model: device.model,
      os_version: device.os_version,
    });
    return true;
  }

  isDrained(serial: string): boolean {
    return this.drainedDevices.has(serial);
  }

  /** What claims report as drained_devices, in the order they were drained. */
  drained(): Device[] {
    return [...this.drainedDevices.values()];
  }
}
