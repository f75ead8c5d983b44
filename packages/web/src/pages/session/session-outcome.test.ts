import { describe, expect, it } from "vitest";
import type { DeviceRun, ExecutionStatus } from "../../api/types.ts";
import { sessionOutcome } from "./session-outcome.ts";

const session = (status: ExecutionStatus, reason: string | null) => ({
  status,
  devices: [{ reason } as DeviceRun],
});

describe("sessionOutcome", () => {
  it("says how a session ended when its status is what the end gives", () => {
    expect(sessionOutcome(session("passed", "deleted"))).toEqual({
      endReason: "deleted",
      setByClient: false,
      sentence: "The session ended because the client ended it (DELETE).",
    });
    expect(sessionOutcome(session("errored", "idle_timeout")).sentence).toBe(
      "The session ended because no command came within its idle timeout.",
    );
    expect(sessionOutcome(session("cancelled", "cancelled")).setByClient).toBe(false);
  });

  it("says the verdict the client set, with its reason, before how the session ended", () => {
    const failed = sessionOutcome({
      ...session("failed", "deleted"),
      client_result: { status: "failed", reason: "the login screen never showed" },
    });
    expect(failed.setByClient).toBe(true);
    expect(failed.sentence).toBe(
      "Marked failed by the client: “the login screen never showed”. The session ended because the client ended it (DELETE).",
    );
    // A session marked passed that then timed out stays passed (docs/appium.md).
    const passed = sessionOutcome({
      ...session("passed", "idle_timeout"),
      client_result: { status: "passed", reason: null },
    });
    expect(passed.sentence).toBe(
      "Marked passed by the client. The session ended because no command came within its idle timeout.",
    );
    // Marked passed and then deleted: the status alone could not tell, client_result does.
    expect(
      sessionOutcome({ ...session("passed", "deleted"), client_result: { status: "passed", reason: null } })
        .setByClient,
    ).toBe(true);
  });

  it("repeats why Appium refused a session that could not be created", () => {
    const refused = {
      status: "errored" as const,
      devices: [
        {
          reason: "session_not_created",
          steps: [{ message: "session not created: the app file was not found" }],
        } as DeviceRun,
      ],
    };
    expect(sessionOutcome(refused).sentence).toBe(
      "The session ended because the session could not be created (session not created: the app file was not found).",
    );
  });

  it("says nothing while the session waits or runs, and an unknown end by its code", () => {
    expect(sessionOutcome(session("running", null)).sentence).toBeNull();
    expect(sessionOutcome(session("errored", "solar_flare")).sentence).toBe(
      "The session ended because solar_flare.",
    );
  });
});
