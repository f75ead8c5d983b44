import { describe, expect, it } from "vitest";
import { call } from "../../server/test/harness.ts";
import { waitFor } from "./agent-process.ts";
import { androidServer } from "./android-server.ts";
import type { Suite } from "./stand-ins/device-lab.ts";

// The Android path end to end: the app and test APK fixtures (built with Debian's aapt) uploaded to a real
// server, an instrumentation plan triggered, a real `testbay-agent` process with `--devices auto` finding
// the stand-in devices with adb and running the plan on them, and the results read back as a user would.
// No real device is involved: the devices are the stateful adb stand-in of test/stand-ins.

const TEST_PACKAGE = "com.example.basic.test";
const login = "com.example.basic.LoginTest";
const cart = "com.example.basic.CartTest";
const stack = `java.lang.AssertionError: expected:<Welcome> but was:<Sign in>
\tat org.junit.Assert.fail(Assert.java:89)
\tat com.example.basic.LoginTest.rejectsBadPassword(LoginTest.kt:42)`;
const pixel = (serial: string) => ({ serial, model: "Pixel 7", release: "14", sdk: 34 });

const android = androidServer({ versions: ["1.0.0", "2.0.0"] });
const { startAgent, triggerInstrumentation, execution, finished } = android;

describe("an instrumentation plan on an Android device (stand-in)", () => {
  it("installs app and test APK, lists then runs the tests, and reports them with their captures", async () => {
    const suite: Suite = {
      tests: [
        {
          class: login,
          method: "signsIn",
          outcome: "pass",
          duration_ms: 200,
          logcat: ["D/Login: form shown"],
        },
        {
          class: login,
          method: "rejectsBadPassword",
          outcome: "fail",
          duration_ms: 200,
          stack,
          logcat: ["W/Login: bad password"],
        },
        { class: cart, method: "addsItem", outcome: "pass", duration_ms: 200 },
        { class: cart, method: "remembersCart", outcome: "ignored" },
      ],
    };
    const lab = await android.createLab({
      devices: [pixel("emulator-5554")],
      suites: { [TEST_PACKAGE]: suite },
      timeScale: 0.05,
    });
    const id = await triggerInstrumentation("1.0.0");
    startAgent("rack-1", lab.env);
    const view = await finished(id);
    expect(view).toMatchObject({
      status: "failed",
      summary: { tests: 4, passed: 2, failed: 1, skipped: 1 },
      devices: [{ status: "failed", agent_id: "rack-1" }],
    });

    // Both APKs installed from .apk paths with -g, the tests listed before they ran. Read from the calls: the
    // agent uninstalls both from this plugged-in device once the run is over (API.md §13).
    const adb = lab.calls().filter((c) => c.tool === "adb" && c.serial === "emulator-5554");
    const installs = adb.filter((c) => c.argv.includes("install"));
    expect(installs.map((c) => c.argv.slice(c.argv.indexOf("install")))).toEqual([
      ["install", "-r", "-t", "-g", expect.stringMatching(/\/com\.example\.basic\.apk$/)],
      ["install", "-r", "-t", "-g", expect.stringMatching(/\/com\.example\.basic\.test\.apk$/)],
    ]);
    const instruments = adb.map((c) => c.argv.join(" ")).filter((a) => a.includes("am instrument"));
    expect(instruments).toHaveLength(2);
    expect(instruments[0]).toContain("-e 'log' 'true'");
    expect(instruments[1]).not.toContain("'log'");

    // The failure with its message, stack trace and captures, each one served.
    const tests = (await call(`${android.server.baseUrl}/executions/${id}/tests`, { headers: android.ci }))
      .body.items;
    expect(tests.map((t: { name: string; status: string }) => `${t.name} ${t.status}`)).toEqual([
      "signsIn passed",
      "rejectsBadPassword failed",
      "addsItem passed",
      "remembersCart skipped",
    ]);
    const failure = tests[1];
    expect(failure).toMatchObject({
      classname: login,
      message: "java.lang.AssertionError: expected:<Welcome> but was:<Sign in>",
      stack_trace: expect.stringContaining("LoginTest.kt:42"),
      device: { platform: "android", serial: "emulator-5554", model: "Pixel 7", os_version: "14" },
    });
    const folder = "device-emulator-5554";
    expect(failure.artifacts).toEqual([
      `${folder}/screenshots/${login}.rejectsBadPassword.png`,
      `${folder}/logcat/${login}.rejectsBadPassword.txt`,
      `${folder}/video/part-01.mp4`,
    ]);
    const fetchArtifact = (name: string) =>
      fetch(`${android.server.baseUrl}/executions/${id}/artifacts/${name}`, { headers: android.ci });
    const png = Buffer.from(await (await fetchArtifact(failure.artifacts[0])).arrayBuffer());
    expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
    const cut = await (await fetchArtifact(failure.artifacts[1])).text();
    expect(cut).toContain("bad password");
    expect(cut).not.toContain("form shown");
    const video = Buffer.from(await (await fetchArtifact(failure.artifacts[2])).arrayBuffer());
    expect(video.subarray(4, 8).toString("latin1")).toBe("ftyp");
    expect((await fetchArtifact(`${folder}/logcat.txt`)).status).toBe(200);

    // JUnit says the same.
    const junit = await (
      await fetch(`${android.server.baseUrl}/executions/${id}/junit`, { headers: android.ci })
    ).text();
    expect(junit).toMatch(/<testsuites[^>]* tests="4" failures="1"/);
    expect(junit).toContain('<testcase classname="com.example.basic.LoginTest" name="rejectsBadPassword"');
    expect(junit).toContain("expected:&lt;Welcome&gt; but was:&lt;Sign in&gt;");
  });

  it("hands a run whose device vanished back, and finishes it on another device with no failure recorded", async () => {
    const passing = (n: number) =>
      Array.from({ length: n }, (_, i) => ({
        class: cart,
        method: `step${i + 1}`,
        outcome: "pass" as const,
        duration_ms: 200,
      }));
    const lab = await android.createLab({
      devices: [pixel("emulator-5554")],
      suites: { [TEST_PACKAGE]: { tests: passing(4), vanishAfterTests: 2 } },
      timeScale: 0.05,
    });
    const id = await triggerInstrumentation("2.0.0");
    const agent = startAgent("rack-2", lab.env);
    // The first device goes after two tests; the run goes back to the queue and waits for a device.
    const requeued = await waitFor(
      "the run to be re-queued",
      async () => {
        const view = await execution(id);
        return view.devices[0].attempt === 2 && view.devices[0].status === "queued" && view;
      },
      20_000,
    ).catch(async (e) => {
      console.log(agent.output(), JSON.stringify(await execution(id), null, 1));
      throw e;
    });
    expect(requeued.status).not.toMatch(/failed|errored/);
    // A second device is plugged in (the agent sees it without a restart) and the run finishes there.
    lab.setSuite(TEST_PACKAGE, { tests: passing(4) });
    lab.plug(pixel("emulator-5556"));
    const view = await finished(id);
    expect(view).toMatchObject({
      status: "passed",
      summary: { tests: 4, passed: 4, failed: 0 },
      devices: [{ attempt: 2, status: "passed" }],
    });
    const tests = (await call(`${android.server.baseUrl}/executions/${id}/tests`, { headers: android.ci }))
      .body.items;
    expect(tests).toHaveLength(4);
    for (const test of tests) {
      expect(test).toMatchObject({ status: "passed", device: { serial: "emulator-5556" } });
      expect(test.attempts.every((a: { status: string }) => a.status === "passed")).toBe(true);
    }
    expect(agent.output()).toContain("emulator-5556");
  });
});
