import { describe, expect, it } from "vitest";
import type { Device } from "../steps/step-types.ts";
import { DEVICE_LOST, DeviceHealth } from "./device-health.ts";

const pixel: Device = { serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" };
const other: Device = { serial: "R58M42ABCDE", platform: "android", model: "SM-G991B", os_version: "13" };
const lost = { reason: DEVICE_LOST };

describe("DeviceHealth", () => {
  it("drains a device on its third device_lost run in a row, and says so once", () => {
    const health = new DeviceHealth();
    expect(health.record(pixel, lost)).toBe(false);
    expect(health.record(pixel, lost)).toBe(false);
    expect(health.isDrained(pixel.serial)).toBe(false);
    expect(health.record(pixel, lost)).toBe(true);
    expect(health.isDrained(pixel.serial)).toBe(true);
    expect(health.drained()).toEqual([pixel]);
    expect(health.record(pixel, lost)).toBe(false);
    expect(health.record(pixel, { reason: null })).toBe(false);
    expect(health.drained()).toEqual([pixel]);
  });

  it.each([
    ["a pass", null],
    ["a failing test", "step_failed"],
    ["a step error", "step_errored"],
    ["a timeout", "timeout"],
    ["a cancel", "cancelled"],
    ["a shutdown", "agent_shutdown"],
  ])("starts counting again after %s", (_, reason) => {
    const health = new DeviceHealth();
    health.record(pixel, lost);
    health.record(pixel, lost);
    health.record(pixel, { reason });
    health.record(pixel, lost);
    expect(health.record(pixel, lost)).toBe(false);
    expect(health.isDrained(pixel.serial)).toBe(false);
    expect(health.record(pixel, lost)).toBe(true);
  });

  it("counts each device apart", () => {
    const health = new DeviceHealth();
    health.record(pixel, lost);
    health.record(other, lost);
    health.record(pixel, lost);
    health.record(other, { reason: null });
    expect(health.record(pixel, lost)).toBe(true);
    expect(health.isDrained(other.serial)).toBe(false);
    expect(health.drained().map((d) => d.serial)).toEqual([pixel.serial]);
  });

  it("reports only the fields a claim takes", () => {
    const health = new DeviceHealth(1);
    health.record({ ...pixel, modelFrom: "getprop", transportId: "3" } as Device, lost);
    expect(health.drained()).toEqual([pixel]);
  });
});
