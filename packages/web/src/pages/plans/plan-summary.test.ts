import { describe, expect, it } from "vitest";
import type { TestPlan } from "../../api/types.ts";
import { devicesSummary, stepsSummary } from "./plan-summary.ts";

// API.md §5's device options (shards) are not in the OpenAPI document yet: the summary reads them when present.
const sharded = { type: "instrumentation", name: "UI tests", shards: 4 } as TestPlan["steps"][number];

describe("a plan in a few words", () => {
  it("names its steps in order, with their shards", () => {
    expect(stepsSummary([{ type: "inspect", expect: { debuggable: false } }, sharded])).toBe(
      "inspect → UI tests (instrumentation) ×4 shards",
    );
    expect(stepsSummary([])).toBe("no steps");
  });

  it("names its devices, or the agent host when it has none", () => {
    expect(devicesSummary([])).toBe("agent host");
    expect(
      devicesSummary([{ platform: "android", model: "Pixel 8", os_version: "14" }, { platform: "ios" }]),
    ).toBe("Pixel 8 14, ios");
  });
});
