import { describe, expect, it } from "vitest";
import { call } from "../../server/test/harness.ts";
import { androidServer } from "./android-server.ts";
import type { Outcome, SuiteTest } from "./stand-ins/device-lab.ts";

// retry_failed_tests end to end: a real server, a real `testbay-agent` process and the stateful adb stand-in,
// whose tests with `outcomes` fail on one run and pass on the next as flaky tests do. What the plan's author
// reads afterwards: the execution's status and summary, each test's tries and their captures, the JUnit report.

const TEST_PACKAGE = "com.example.basic.test";
const login = "com.example.basic.LoginTest";
const folder = "device-emulator-5554";

const android = androidServer();

const test = (method: string, outcomes: Outcome[], logcat: string): SuiteTest => ({
  class: login,
  method,
  outcomes,
  duration_ms: 200,
  stack: `java.lang.AssertionError: ${method} did not sign in\n\tat ${login}.${method}(LoginTest.kt:42)`,
  logcat: [`W/Login: ${logcat}`],
});

async function runPlan(tests: SuiteTest[], retries: number) {
  const lab = await android.createLab({
    devices: [{ serial: "emulator-5554", model: "Pixel 7", release: "14", sdk: 34 }],
    suites: { [TEST_PACKAGE]: { tests } },
    timeScale: 0.05,
  });
  const id = await android.triggerInstrumentation("1.0.0", {
    retry_failed_tests: retries,
    record_video: "never",
  });
  android.startAgent("rack-1", lab.env);
  const view = await android.finished(id);
  const { baseUrl } = android.server;
  const headers = android.ci;
  const plan = await call(`${baseUrl}/testplans/${view.test_plan_id}`, { headers });
  expect(plan.body.steps[0].retry_failed_tests).toBe(retries);
  const tests_ = (await call(`${baseUrl}/executions/${id}/tests`, { headers })).body.items;
  const junit = await (await fetch(`${baseUrl}/executions/${id}/junit`, { headers })).text();
  const artifact = (name: string) => fetch(`${baseUrl}/executions/${id}/artifacts/${name}`, { headers });
  return { id, view, tests: tests_, junit, artifact, lab };
}

describe("retry_failed_tests on an Android device (stand-in)", () => {
  it("a test that fails once and then passes is passed and flaky; the run passes; both tries' captures kept", async () => {
    const { view, tests, junit, artifact, lab } = await runPlan(
      [test("signsIn", ["pass"], "form shown"), test("rejectsBadPassword", ["fail", "pass"], "bad password")],
      2,
    );
    expect(lab.testRuns("emulator-5554")).toEqual({
      [`${login}#signsIn`]: 1,
      [`${login}#rejectsBadPassword`]: 2,
    });
    expect(view.status).toBe("passed");
    expect(view.summary).toMatchObject({ tests: 2, passed: 2, failed: 0, flaky: 1 });
    expect(
      tests.map((t: { name: string; status: string; flaky: boolean }) => [t.name, t.status, t.flaky]),
    ).toEqual([
      ["signsIn", "passed", false],
      ["rejectsBadPassword", "passed", true],
    ]);
    const flaky = tests[1];
    expect(flaky.attempts).toEqual([
      {
        attempt: 1,
        retry: 0,
        status: "failed",
        duration_ms: expect.any(Number),
        message: "java.lang.AssertionError: rejectsBadPassword did not sign in",
        artifacts: [
          `${folder}/screenshots/${login}.rejectsBadPassword.png`,
          `${folder}/logcat/${login}.rejectsBadPassword.txt`,
        ],
      },
      {
        attempt: 1,
        retry: 1,
        status: "passed",
        duration_ms: expect.any(Number),
        message: null,
        artifacts: [],
      },
    ]);
    const [shot, cut] = flaky.attempts[0].artifacts;
    const png = Buffer.from(await (await artifact(shot)).arrayBuffer());
    expect(png.subarray(1, 4).toString("latin1")).toBe("PNG");
    const cutText = await (await artifact(cut)).text();
    expect(cutText).toContain("bad password");
    expect(cutText).toContain(`TestRunner: failed: rejectsBadPassword(${login})`);
    // The whole log holds both runs of it.
    const whole = await (await artifact(`${folder}/logcat.txt`)).text();
    expect(whole.match(/TestRunner: started: rejectsBadPassword/g)).toHaveLength(2);

    expect(junit).toMatch(/<testsuites[^>]* tests="2" failures="0" errors="0"/);
    expect(junit).toContain(
      '<flakyFailure message="java.lang.AssertionError: rejectsBadPassword did not sign in" type="java.lang.AssertionError">',
    );
    expect(junit).not.toContain("<failure");
  });

  it("a test that fails every time with retry_failed_tests: 2 has three tries and the run fails", async () => {
    const { view, tests, junit, artifact } = await runPlan(
      [test("signsIn", ["pass"], "form shown"), test("rejectsBadPassword", ["fail"], "bad password")],
      2,
    );
    expect(view.status).toBe("failed");
    expect(view.summary).toMatchObject({ tests: 2, passed: 1, failed: 1, flaky: 0 });
    const failed = tests.find((t: { name: string }) => t.name === "rejectsBadPassword");
    expect(failed).toMatchObject({ status: "failed", flaky: false });
    expect(failed.attempts.map((t: { retry: number; status: string }) => [t.retry, t.status])).toEqual([
      [0, "failed"],
      [1, "failed"],
      [2, "failed"],
    ]);
    // Each try's screenshot and logcat cut under a name of its own, each served.
    const names = failed.attempts.flatMap((t: { artifacts: string[] }) => t.artifacts);
    expect(names).toEqual([
      `${folder}/screenshots/${login}.rejectsBadPassword.png`,
      `${folder}/logcat/${login}.rejectsBadPassword.txt`,
      `${folder}/screenshots/${login}.rejectsBadPassword.retry-1.png`,
      `${folder}/logcat/${login}.rejectsBadPassword.retry-1.txt`,
      `${folder}/screenshots/${login}.rejectsBadPassword.retry-2.png`,
      `${folder}/logcat/${login}.rejectsBadPassword.retry-2.txt`,
    ]);
    for (const name of names) expect((await artifact(name)).status).toBe(200);
    expect(failed.artifacts).toEqual(names.slice(4));

    expect(junit).toMatch(/<testsuites[^>]* tests="2" failures="1" errors="0"/);
    expect(junit.match(/<failure /g)).toHaveLength(1);
    expect(junit.match(/<rerunFailure /g)).toHaveLength(2);
  });
});
