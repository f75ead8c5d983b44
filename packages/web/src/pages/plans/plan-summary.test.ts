import { describe, expect, it } from "vitest";
import type { TestPlan } from "../../api/types.ts";
import { devicesSummary, stepSummary, stepsSummary } from "./plan-summary.ts";

type Step = TestPlan["steps"][number];
const sharded: Step = { type: "instrumentation", name: "UI tests", shards: 4 };

describe("a plan in a few words", () => {
  it("names its steps in order, with their shards", () => {
    expect(stepsSummary([{ type: "inspect", expect: { debuggable: false } }, sharded])).toBe(
      "inspect → UI tests (instrumentation): 4 shards by duration",
    );
    expect(stepsSummary([])).toBe("no steps");
  });

  it("says how a step is split and how often its failed tests are retried", () => {
    expect(
      stepSummary({ type: "instrumentation", shards: 3, sharding: "duration", retry_failed_tests: 2 }),
    ).toBe("instrumentation: 3 shards by duration, failed tests retried up to 2 times");
    expect(stepSummary({ type: "maestro", flows: ["- launchApp"], shards: 2, sharding: "uniform" })).toBe(
      "maestro: 2 shards by count",
    );
    expect(stepSummary({ type: "maestro", flows: ["- launchApp"], retry_failed_tests: 1 })).toBe(
      "maestro: failed tests retried up to once",
    );
    // One shard and no retries say nothing: that is every step's default.
    expect(stepSummary({ type: "instrumentation", shards: 1, retry_failed_tests: 0 })).toBe(
      "instrumentation",
    );
  });

  it("names its devices, or the agent host when it has none", () => {
    expect(devicesSummary([])).toBe("agent host");
    expect(
      devicesSummary([{ platform: "android", model: "Pixel 8", os_version: "14" }, { platform: "ios" }]),
    ).toBe("Pixel 8 14, ios");
  });
});
