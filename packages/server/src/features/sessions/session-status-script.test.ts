import { describe, expect, it } from "vitest";
import { readSessionStatusScript } from "./session-status-script.ts";

const execute = (script: unknown) => ({ method: "POST", path: "/execute/sync", body: { script, args: [] } });

describe("the setSessionStatus script", () => {
  it("reads the status and the reason a client sends through executeScript", () => {
    expect(
      readSessionStatusScript(
        execute('testbay: {"action": "setSessionStatus", "status": "failed", "reason": "cart total wrong"}'),
      ),
    ).toEqual({ status: "failed", reason: "cart total wrong" });
    expect(
      readSessionStatusScript(execute('  testbay:{"action":"setSessionStatus","status":"passed"}')),
    ).toEqual({
      status: "passed",
      reason: null,
    });
  });

  it("leaves every other command and script to Appium", () => {
    expect(readSessionStatusScript(execute("mobile: shell"))).toBeUndefined();
    expect(readSessionStatusScript(execute("return document.title"))).toBeUndefined();
    expect(
      readSessionStatusScript({ method: "POST", path: "/execute/async", body: { script: "testbay: {}" } }),
    ).toBe(undefined);
    expect(readSessionStatusScript({ method: "GET", path: "/source" })).toBeUndefined();
    expect(
      readSessionStatusScript({ method: "POST", path: "/execute/sync", body: { args: [] } }),
    ).toBeUndefined();
  });

  it("refuses a malformed one of ours, saying what to write", () => {
    const refusals = [
      "testbay: not json",
      'testbay: {"action": "setSessionName", "status": "passed"}',
      'testbay: {"action": "setSessionStatus", "status": "error"}',
      `testbay: {"action": "setSessionStatus", "status": "failed", "reason": "${"x".repeat(2001)}"}`,
      'testbay: {"action": "setSessionStatus", "status": "failed", "reason": 42}',
    ].map((script) => readSessionStatusScript(execute(script)));
    for (const refusal of refusals)
      expect(refusal).toEqual({ refused: expect.stringContaining("setSessionStatus") });
  });
});
