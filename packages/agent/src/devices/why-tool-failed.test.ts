import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { whyToolFailed } from "./why-tool-failed.ts";

const run = promisify(execFile);

/** What execFile rejects with for `sh -c SCRIPT`. */
async function failureOf(script: string, timeoutMs = 10_000): Promise<unknown> {
  try {
    await run("sh", ["-c", script], { timeout: timeoutMs });
  } catch (error) {
    return error;
  }
  throw new Error("the script succeeded");
}

describe("whyToolFailed", () => {
  it("gives the tool's last words on stderr, not node's 'Command failed' line", async () => {
    const error = await failureOf(
      "printf '* daemon not running; starting now at tcp:5037\\n* failed to start daemon\\nadb: failed to check server version: cannot connect to daemon\\n\\n' >&2; exit 1",
    );
    expect((error as Error).message.split("\n")[0]).toMatch(/^Command failed: sh -c/);
    expect(whyToolFailed(error, 10_000)).toBe(
      "adb: failed to check server version: cannot connect to daemon",
    );
  });

  it("drops the UserInfo of an NSError, which only repeats it", async () => {
    const error = await failureOf(
      `echo 'Unable to locate device set: Error Domain=NSPOSIXErrorDomain Code=61 "Connection refused" UserInfo={NSLocalizedDescription=CoreSimulatorService connection became invalid.}' >&2; exit 1`,
    );
    expect(whyToolFailed(error, 10_000)).toBe(
      'Unable to locate device set: Error Domain=NSPOSIXErrorDomain Code=61 "Connection refused"',
    );
  });

  it("falls back to stdout, then to the exit code", async () => {
    expect(whyToolFailed(await failureOf("echo 'on stdout'; exit 3"), 10_000)).toBe("on stdout");
    expect(whyToolFailed(await failureOf("exit 3"), 10_000)).toBe("exit code 3, nothing on stderr");
  });

  it("says that the tool did not answer in time", async () => {
    expect(whyToolFailed(await failureOf("exec sleep 30", 200), 200)).toBe("no answer within 200 ms");
    expect(whyToolFailed({ killed: true, signal: "SIGTERM" }, 10_000)).toBe("no answer within 10 s");
  });

  it("cuts a very long line", () => {
    const said = whyToolFailed({ code: 1, stderr: `${"x".repeat(500)}\n` }, 10_000);
    expect(said).toHaveLength(300);
    expect(said.endsWith("…")).toBe(true);
  });
});
