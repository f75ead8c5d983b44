import { describe, expect, it } from "vitest";
import { meetsSelectors, selectorsOf, storedSelectors, versionKey } from "./device-selectors.ts";

const pixel = {
  serial: "emulator-5554",
  platform: "android",
  model: "Pixel 7",
  os_version: "14",
  api_level: 34,
  abi: "x86_64",
  emulator: true,
  labels: { gpu: "host", tier: "fast" },
};

describe("versionKey: versions compared a component at a time, as numbers", () => {
  it("orders 9 < 10 < 10.1 < 10.2 < 11, and 17.4 < 17.4.1 < 17.10", () => {
    const ordered = ["9", "10", "10.1", "10.2", "11", "17.4", "17.4.1", "17.10"];
    const keys = ordered.map((v) => versionKey(v) as string);
    expect([...keys].sort()).toEqual(keys);
  });

  it("takes 10.0 and 10 for the same version", () => {
    expect(versionKey("10.0")).toBe(versionKey("10"));
    expect(versionKey("10.0.0")).toBe(versionKey("10"));
  });

  it("has no key for what is not dotted numbers", () => {
    for (const version of ["UpsideDownCake", "14-beta", "", "1..2", "1234567"]) {
      expect(versionKey(version)).toBeNull();
    }
  });
});

describe("meetsSelectors", () => {
  it("admits a device every given selector admits", () => {
    expect(
      meetsSelectors(
        {
          api_level_min: 33,
          api_level_max: 34,
          os_version_min: "13.1",
          os_version_max: "14",
          models: ["Pixel 6", "Pixel 7"],
          abi: "x86_64",
          emulator: true,
          labels: { gpu: "host" },
        },
        pixel,
      ),
    ).toBe(true);
    expect(meetsSelectors({}, pixel)).toBe(true);
  });

  it("refuses a device one selector refuses", () => {
    const refusals = [
      { api_level_min: 35 },
      { api_level_max: 33 },
      { os_version_min: "14.1" },
      { os_version_max: "13" },
      { models: ["Pixel 8"] },
      { abi: "arm64-v8a" },
      { emulator: false },
      { labels: { gpu: "host", room: "b2" } },
    ];
    for (const selectors of refusals)
      expect(meetsSelectors(selectors, pixel), JSON.stringify(selectors)).toBe(false);
  });

  it("refuses a device that does not say the fact a selector is on (older agents)", () => {
    const older = { serial: "R58", platform: "android", model: "Pixel 7", os_version: "Baklava" };
    for (const selectors of [
      { api_level_min: 1 },
      { abi: "x86_64" },
      { emulator: false },
      { os_version_max: "99" },
    ]) {
      expect(meetsSelectors(selectors, older), JSON.stringify(selectors)).toBe(false);
    }
    expect(meetsSelectors({ models: ["Pixel 7"] }, older)).toBe(true);
  });
});

describe("selectorsOf and storedSelectors", () => {
  it("read a stored plan entry and keep what a device run stores: version keys, sorted sets", () => {
    const selectors = selectorsOf({
      platform: "android",
      model: "Pixel 7",
      os_version_min: "10.1",
      models: ["b", "a"],
      emulator: false,
      labels: { tier: "fast", gpu: "host" },
    });
    expect(selectors).toEqual({
      os_version_min: "10.1",
      models: ["b", "a"],
      emulator: false,
      labels: { tier: "fast", gpu: "host" },
    });
    expect(storedSelectors(selectors)).toEqual({
      required_api_level_min: null,
      required_api_level_max: null,
      required_os_version_min: "000010000001",
      required_os_version_max: null,
      required_abi: null,
      required_emulator: 0,
      models: ["a", "b"],
      labels: ["gpu=host", "tier=fast"],
    });
  });
});
