import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR } from "../steps/test-context.ts";
import { deviceFacts, parseGetprop } from "./getprop.ts";

const pixel8Pro = readFileSync(join(FIXTURES_DIR, "getprop-pixel-8-pro.txt"), "utf8");

describe("parseGetprop", () => {
  it("reads every line of a real dump, values as printed", () => {
    const props = parseGetprop(pixel8Pro);
    expect(props.size).toBe(pixel8Pro.trim().split("\n").length);
    expect(props.get("ro.product.model")).toBe("Pixel 8 Pro");
    expect(props.get("ro.build.version.release")).toBe("16");
    expect(props.get("ro.build.version.base_os")).toBe("");
    expect(props.get("ro.build.date")).toBe("Tue Mar 10 07:23:26 UTC 2026");
    expect(props.get("debug.tracing.device_state")).toBe("0:DEFAULT");
    expect(props.get("ro.boot.vbmeta.device")).toBe("PARTUUID=febaca17-f31a-42d2-9cea-96cd8012c053");
    expect(props.get("gsm.operator.alpha")).toBe("Freedom,");
  });

  it("keeps a value that holds brackets and the separator itself", () => {
    const props = parseGetprop("[x.note]: [a]: [b] c]\n[y]: [[nested]]\n");
    expect(props.get("x.note")).toBe("a]: [b] c");
    expect(props.get("y")).toBe("[nested]");
  });

  it("reads lines ended by a PTY's \\r\\n and skips what is not a property", () => {
    const props = parseGetprop(
      "[ro.product.model]: [SM-G991B]\r\n[ro.build.version.release]: [13]\r\n" +
        "/system/bin/sh: getprop: inaccessible or not found\r\n\r\n[broken: [x]\n",
    );
    expect([...props]).toEqual([
      ["ro.product.model", "SM-G991B"],
      ["ro.build.version.release", "13"],
    ]);
  });
});

describe("deviceFacts", () => {
  it("takes the model with its spaces and the release from getprop", () => {
    expect(deviceFacts(parseGetprop(pixel8Pro), "Pixel_8_Pro")).toEqual({
      model: "Pixel 8 Pro",
      os_version: "16",
      modelFrom: "getprop",
      api_level: 36,
      abi: "arm64-v8a",
      emulator: false,
    });
  });

  it("reads the API level, the ABI and that an emulator is one (ro.kernel.qemu, or ro.boot.qemu from API 30)", () => {
    const facts = deviceFacts(
      parseGetprop(
        "[ro.product.model]: [sdk_gphone64_x86_64]\n[ro.build.version.sdk]: [34]\n[ro.product.cpu.abi]: [x86_64]\n[ro.boot.qemu]: [1]\n",
      ),
      undefined,
    );
    expect(facts).toMatchObject({ api_level: 34, abi: "x86_64", emulator: true });
  });

  it("keeps underscores that are part of the real model", () => {
    const props = parseGetprop(
      "[ro.product.model]: [sdk_gphone64_x86_64]\n[ro.build.version.release]: [14]\n",
    );
    expect(deviceFacts(props, "sdk_gphone64_x86_64").model).toBe("sdk_gphone64_x86_64");
  });

  it("falls back to adb's model, underscores read as spaces, and an unknown release when getprop failed", () => {
    expect(deviceFacts(null, "Pixel_7")).toEqual({
      model: "Pixel 7",
      os_version: "unknown",
      modelFrom: "adb",
      api_level: null,
      abi: null,
      emulator: false,
    });
    expect(deviceFacts(null, undefined)).toMatchObject({
      model: "unknown",
      os_version: "unknown",
      modelFrom: "adb",
    });
  });

  it("falls back for the model alone when getprop answered without it", () => {
    expect(
      deviceFacts(parseGetprop("[ro.build.version.release]: [9]\n[ro.product.model]: [ ]\n"), "Moto_G"),
    ).toMatchObject({
      model: "Moto G",
      os_version: "9",
      modelFrom: "adb",
    });
  });
});
