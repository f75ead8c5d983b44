import { existsSync } from "node:fs";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { runShellStep } from "./shell-step.ts";
import { FIXTURES_DIR, hasEnded, makeStepContext, type TestStepContext } from "./test-context.ts";

let ctx: TestStepContext;
afterEach(() => ctx.cleanup());

const shell = (run: string, junit?: string) => ({ type: "shell" as const, run, ...(junit ? { junit } : {}) });

function childPid(lines: string[]): number {
  const line = lines.find((l) => l.startsWith("child="));
  if (line === undefined) throw new Error("the script printed no child pid");
  return Number(line.slice("child=".length));
}

describe("runShellStep", () => {
  it("passes on exit code 0 and streams the output into the log", async () => {
    ctx = await makeStepContext();
    expect(await runShellStep(shell("echo hello; echo oops >&2"), ctx)).toEqual({
      status: "passed",
      message: null,
      exit_code: 0,
    });
    expect(ctx.lines("stdout")).toEqual(["hello"]);
    expect(ctx.lines("stderr")).toEqual(["oops"]);
  });

  it("fails on a non-zero exit code", async () => {
    ctx = await makeStepContext();
    expect(await runShellStep(shell("exit 3"), ctx)).toEqual({
      status: "failed",
      message: "exit code 3",
      exit_code: 3,
    });
  });

  it("runs in the work directory with the Testbay variables on top of the execution's env", async () => {
    ctx = await makeStepContext({
      env: { GREETING: "hi", TESTBAY_PACKAGE: "overridden by Testbay" },
      device: {
        serial: "emulator-5554",
        platform: "android",
        model: "sdk_gphone64_x86_64",
        os_version: "14",
      },
    });
    const script = [
      "pwd",
      'echo "$GREETING"',
      'echo "$TESTBAY_APP_PATH"',
      'echo "$TESTBAY_PACKAGE $TESTBAY_VERSION $TESTBAY_DEVICE_SERIAL"',
      'echo "$TESTBAY_ARTIFACTS_DIR"',
      '[ -n "$PATH" ] && echo "has PATH"',
    ].join("; ");
    await runShellStep(shell(script), ctx);
    expect(ctx.lines("stdout")).toEqual([
      ctx.workDir,
      "hi",
      join(ctx.workDir, "com.example.shop.apk"),
      "com.example.shop 1.2.3 emulator-5554",
      ctx.artifactsDir,
      "has PATH",
    ]);
  });

  it("gives the app as a file named for its format, the cached bytes behind it (adb installs only *.apk)", async () => {
    ctx = await makeStepContext();
    await runShellStep(
      shell('basename "$TESTBAY_APP_PATH"; cmp "$TESTBAY_APP_PATH" "$CACHED" && echo same'),
      {
        ...ctx,
        env: { CACHED: await ctx.appPath() },
      },
    );
    expect(ctx.lines("stdout")).toEqual(["com.example.shop.apk", "same"]);
  });

  it("keeps the agent's own credentials from the script", async () => {
    vi.stubEnv("TESTBAY_CLIENT_SECRET", "tbs_agent_secret");
    vi.stubEnv("TESTBAY_TOKEN", "agent-token");
    try {
      ctx = await makeStepContext();
      await runShellStep(shell('echo "secret=[$TESTBAY_CLIENT_SECRET] token=[$TESTBAY_TOKEN]"'), ctx);
      expect(ctx.lines("stdout")).toEqual(["secret=[] token=[]"]);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("sets TESTBAY_DEVICE_SERIAL to an empty string on the host", async () => {
    ctx = await makeStepContext();
    // printenv succeeds only for a variable that is set; it prints the empty value as an empty line.
    await runShellStep(shell("printenv TESTBAY_DEVICE_SERIAL && echo set"), ctx);
    expect(ctx.lines("stdout")).toEqual(["", "set"]);
  });

  it("errors on timeout and kills the process group, grandchildren included", async () => {
    ctx = await makeStepContext({ timeoutMs: 1_000 });
    const outcome = await runShellStep(shell('sleep 30 & echo "child=$!"; wait'), ctx);
    expect(outcome).toEqual({ status: "errored", message: "timed out after 1 s", exit_code: null });
    expect(await hasEnded(childPid(ctx.lines("stdout")))).toBe(true);
  });

  it("uses the step's own timeout_seconds when it is shorter than the context's limit", async () => {
    ctx = await makeStepContext({ timeoutMs: 60_000 });
    const outcome = await runShellStep({ ...shell("sleep 30"), timeout_seconds: 1 }, ctx);
    expect(outcome).toMatchObject({ status: "errored", message: "timed out after 1 s" });
  });

  it("is cancelled when the signal aborts, and leaves nothing running", async () => {
    ctx = await makeStepContext();
    const log = ctx.log;
    ctx.log = (stream, line) => {
      log(stream, line);
      if (line.startsWith("child=")) ctx.abort();
    };
    const outcome = await runShellStep(shell('sleep 30 & echo "child=$!"; wait'), ctx);
    expect(outcome).toMatchObject({ status: "cancelled", message: "cancelled" });
    expect(await hasEnded(childPid(ctx.lines("stdout")))).toBe(true);
  });

  it("errors when the binary cannot be fetched", async () => {
    ctx = await makeStepContext({
      appPath: () => Promise.reject(new Error("download failed: 503")),
    });
    expect(await runShellStep(shell("true"), ctx)).toEqual({
      status: "errored",
      message: "could not fetch the binary: download failed: 503",
    });
  });

  describe("with junit", () => {
    it("ingests every matching report; a failed test case fails the step even on exit code 0", async () => {
      ctx = await makeStepContext();
      const results = join(ctx.workDir, "build/test-results");
      await mkdir(results, { recursive: true });
      await copyFile(join(FIXTURES_DIR, "junit-gradle.xml"), join(results, "TEST-PriceFormatterTest.xml"));
      const outcome = await runShellStep(shell("exit 0", "build/test-results/**/*.xml"), ctx);
      expect(outcome).toEqual({ status: "failed", message: "1 of 3 test cases failed", exit_code: 0 });
      expect(ctx.cases.map((c) => `${c.name} ${c.status}`)).toEqual([
        "formatsEuros() passed",
        "formatsYen() failed",
        "formatsBitcoin() skipped",
      ]);
      expect(ctx.lines("agent")).toContain(
        "junit: build/test-results/TEST-PriceFormatterTest.xml: 3 test cases",
      );
    });

    it("passes when the command wrote only passing reports", async () => {
      ctx = await makeStepContext();
      const script = `mkdir -p out && echo '<testsuite><testcase classname="A" name="b" time="0.5"/></testsuite>' > out/TEST-a.xml`;
      expect(await runShellStep(shell(script, "out/*.xml"), ctx)).toMatchObject({ status: "passed" });
      expect(ctx.cases).toEqual([
        { classname: "A", name: "b", status: "passed", duration_ms: 500, message: null, details: null },
      ]);
    });

    it("keeps the exit code's failure and still reports the test cases", async () => {
      ctx = await makeStepContext();
      await copyFile(join(FIXTURES_DIR, "maestro-report-passing.xml"), join(ctx.workDir, "report.xml"));
      expect(await runShellStep(shell("exit 1", "*.xml"), ctx)).toEqual({
        status: "failed",
        message: "exit code 1",
        exit_code: 1,
      });
      expect(ctx.cases).toHaveLength(2);
    });

    it("fails when the glob matches no file, and says so in the log", async () => {
      ctx = await makeStepContext();
      expect(await runShellStep(shell("true", "build/**/*.xml"), ctx)).toEqual({
        status: "failed",
        message: "junit glob matched no file",
        exit_code: 0,
      });
      expect(ctx.lines("agent")).toEqual([`junit: no file matches build/**/*.xml in ${ctx.workDir}`]);
    });

    it("errors on an unreadable report and logs why", async () => {
      ctx = await makeStepContext();
      await writeFile(join(ctx.workDir, "TEST-broken.xml"), "<testsuite><testcase>");
      const outcome = await runShellStep(shell("true", "*.xml"), ctx);
      expect(outcome.status).toBe("errored");
      expect(outcome.message).toMatch(/^could not read JUnit report TEST-broken.xml: not well-formed XML/);
      expect(ctx.lines("agent")[0]).toMatch(/^junit: TEST-broken.xml: not well-formed XML/);
    });

    it.each(["../*.xml", "/tmp/**/*.xml"])(
      "refuses the pattern %s before running anything",
      async (pattern) => {
        ctx = await makeStepContext();
        const outcome = await runShellStep(shell("touch ran", pattern), ctx);
        expect(outcome.status).toBe("errored");
        expect(outcome.message).toMatch(/^junit pattern must/);
        expect(existsSync(join(ctx.workDir, "ran"))).toBe(false);
      },
    );
  });
});
