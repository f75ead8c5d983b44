import { afterEach, describe, expect, it, vi } from "vitest";
import { createDeviceLab, type DeviceLab } from "./device-lab.ts";
// @ts-expect-error: the stand-ins are plain JavaScript modules without types
import { deviceWaitMs } from "./state.mjs";

let lab: DeviceLab | undefined;
afterEach(() => {
  vi.unstubAllEnvs();
  lab?.cleanup();
});

describe("device speed", () => {
  it("makes a device's tests take 1 ÷ speed as long, after the time scale; 1 unless given", async () => {
    lab = await createDeviceLab({
      devices: [{ serial: "fast" }, { serial: "slow", speed: 0.5 }],
      timeScale: 0.01,
    });
    vi.stubEnv("FAKE_ADB_STATE", lab.env.FAKE_ADB_STATE);
    vi.stubEnv("FAKE_ADB_TIME_SCALE", lab.env.FAKE_ADB_TIME_SCALE);
    expect(lab.devices().map((d) => [d.serial, d.speed])).toEqual([
      ["fast", 1],
      ["slow", 0.5],
    ]);
    expect(deviceWaitMs(1000, "fast")).toBeCloseTo(10);
    expect(deviceWaitMs(1000, "slow")).toBeCloseTo(20);
    // A device unplugged and plugged again as another model keeps what the new spec says.
    lab.plug({ serial: "slow", speed: 2 });
    expect(deviceWaitMs(1000, "slow")).toBeCloseTo(5);
  });
});
