import { describe, expect, it } from "vitest";
import { endReasonForAbort } from "./appium-step.ts";

describe("endReasonForAbort", () => {
  it("names the session's end after the job's stop reason (runtime/job-runner.ts StopReason)", () => {
    expect(endReasonForAbort("cancelled")).toBe("cancelled");
    expect(endReasonForAbort("timeout")).toBe("max_duration");
    expect(endReasonForAbort("device_lost")).toBe("device_lost");
    expect(endReasonForAbort("shutdown")).toBe("agent_stopped");
    expect(endReasonForAbort("lease_lost")).toBe("agent_stopped");
    expect(endReasonForAbort(new Error("anything else"))).toBe("agent_stopped");
  });
});
