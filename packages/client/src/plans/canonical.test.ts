import { describe, expect, it } from "vitest";
import type { Step } from "../sdk/models.ts";
import { canonicalJson, changedFields } from "./canonical.ts";

const steps: Step[] = [{ type: "shell", run: "./gradlew test", junit: "**/TEST-*.xml" }];

describe("canonicalJson", () => {
  it("ignores key order in objects but keeps the order of lists", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, 1], c: true } })).toBe(
      canonicalJson({ a: { c: true, d: [2, 1] }, b: 1 }),
    );
    expect(canonicalJson({ a: [1, 2] })).not.toBe(canonicalJson({ a: [2, 1] }));
  });
});

describe("changedFields", () => {
  it("sees no change when the file leaves out what the server filled in with its defaults", () => {
    const server = { devices: [], steps, timeout_seconds: 1800, max_attempts: 1 };
    expect(changedFields({ name: "smoke", steps }, server)).toEqual([]);
  });

  it("sees no change when only the order of keys differs", () => {
    const reordered: Step[] = [{ junit: "**/TEST-*.xml", run: "./gradlew test", type: "shell" }];
    const server = {
      devices: [{ platform: "android" as const, model: "Pixel 7" }],
      steps,
      timeout_seconds: 600,
      max_attempts: 2,
    };
    const file = {
      name: "smoke",
      devices: [{ model: "Pixel 7", platform: "android" as const }],
      steps: reordered,
      max_attempts: 2,
      timeout_seconds: 600,
    };
    expect(changedFields(file, server)).toEqual([]);
  });

  it("lists the fields that differ, a default compared as its value", () => {
    const server = { devices: [], steps, timeout_seconds: 900, max_attempts: 1 };
    const file = { name: "smoke", steps: [{ ...steps[0], run: "./gradlew check" } as Step], max_attempts: 3 };
    expect(changedFields(file, server)).toEqual(["steps", "timeout_seconds", "max_attempts"]);
    expect(changedFields({ name: "smoke", steps, devices: [{ platform: "android" }] }, server)).toEqual([
      "devices",
      "timeout_seconds",
    ]);
  });
});
