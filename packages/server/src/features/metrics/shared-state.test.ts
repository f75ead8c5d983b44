import { describe, expect, it } from "vitest";
import { sharedStateOf } from "./shared-state.ts";

const pixel = (serial: string, state?: string) => ({
  serial,
  platform: "android",
  model: "Pixel 7",
  os_version: "14",
  ...(state ? { state } : {}),
});
const iphone = (serial: string) => ({ serial, platform: "ios", model: "iPhone 15", os_version: "17.2" });

describe("sharedStateOf", () => {
  it("counts queued executions by platform, running runs and online agents", () => {
    const state = sharedStateOf([
      { kind: "queued", a: "android", b: null, c: null, n: "3" },
      { kind: "queued", a: "host", b: null, c: null, n: 2 },
      { kind: "running", a: null, b: null, c: null, n: "4" },
      { kind: "agent", a: "org_1 rack-1", b: "[]", c: "[]", n: 0 },
      { kind: "agent", a: "org_2 rack-1", b: "[]", c: "[]", n: 0 },
    ]);
    expect(Object.fromEntries(state.queued)).toEqual({ android: 3, host: 2 });
    expect(state.deviceRunsRunning).toBe(4);
    expect(state.agentsOnline).toBe(2);
    expect(state.devices).toEqual([]);
  });

  it("counts devices by platform and state: busy while leased whatever the last claim said, as GET /agents shows them", () => {
    const state = sharedStateOf([
      { kind: "running", a: null, b: null, c: null, n: 2 },
      {
        kind: "agent",
        a: "org_1 rack-1",
        // emulator-1 was offered at the last claim, then taken by a run: busy, not idle.
        b: JSON.stringify([
          pixel("emulator-1"),
          pixel("emulator-2"),
          pixel("emulator-3", "booting"),
          iphone("sim-1"),
        ]),
        c: JSON.stringify([pixel("emulator-9")]),
        n: 0,
      },
      { kind: "busy", a: "org_1 rack-1", b: JSON.stringify(pixel("emulator-1")), c: null, n: 0 },
      // The same serial on another organization's agent is another device.
      { kind: "agent", a: "org_2 rack-1", b: JSON.stringify([pixel("emulator-1")]), c: "[]", n: 0 },
      // A run held by an agent that is no longer online counts no device.
      { kind: "busy", a: "org_3 gone", b: JSON.stringify(pixel("emulator-5")), c: null, n: 0 },
    ]);
    const byKey = Object.fromEntries(state.devices.map((d) => [`${d.platform}/${d.state}`, d.count]));
    expect(byKey).toEqual({
      "android/idle": 2,
      "android/booting": 1,
      "android/busy": 1,
      "android/drained": 1,
      "ios/idle": 1,
    });
  });
});
