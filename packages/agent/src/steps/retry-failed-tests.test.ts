import { describe, expect, it } from "vitest";
import { type Rerun, retryFailedTests, type TestRef } from "./retry-failed-tests.ts";
import type { TestCase, TestCaseStatus } from "./step-types.ts";

const tryOf = (name: string, status: TestCaseStatus, retry = 0): TestCase => ({
  classname: "com.example.LoginTest",
  name,
  status,
  duration_ms: 10,
  message: status === "passed" ? null : `${name} ${status}`,
  details: null,
  retry,
});

/** A device whose tests give the listed statuses on their reruns, in order; records what it was asked. */
function fakeDevice(reruns: Record<string, TestCaseStatus[]>) {
  const asked: string[] = [];
  const rerun = async (test: TestRef, retry: number): Promise<Rerun> => {
    asked.push(`${test.name}#${retry}`);
    const status = reruns[test.name]?.[retry - 1];
    if (status === undefined) throw new Error(`${test.name} was not expected to run a rerun ${retry}`);
    return { tried: tryOf(test.name, status, retry) };
  };
  return { asked, rerun };
}

describe("retryFailedTests", () => {
  it("reruns only the tests that failed or errored, each until its first pass", async () => {
    const device = fakeDevice({ b: ["failed", "passed"], c: ["passed"] });
    const done = await retryFailedTests(
      [tryOf("a", "passed"), tryOf("b", "failed"), tryOf("c", "errored"), tryOf("d", "skipped")],
      3,
      device.rerun,
    );
    expect(device.asked).toEqual(["b#1", "b#2", "c#1"]);
    expect(done.reruns).toBe(3);
    expect(done.stopped).toBeNull();
    expect(done.final.map((c) => [c.name, c.status, c.retry])).toEqual([
      ["a", "passed", 0],
      ["b", "passed", 2],
      ["c", "passed", 1],
      ["d", "skipped", 0],
    ]);
  });

  it("gives a test that fails every time N reruns and no more; its last try is its status", async () => {
    const device = fakeDevice({ b: ["failed", "errored", "failed"] });
    const done = await retryFailedTests([tryOf("b", "failed")], 2, device.rerun);
    expect(device.asked).toEqual(["b#1", "b#2"]);
    expect(done.final).toEqual([tryOf("b", "errored", 2)]);
  });

  it("stops at a rerun that is skipped (an assumption failed): it did not fail", async () => {
    const device = fakeDevice({ b: ["skipped", "passed"] });
    const done = await retryFailedTests([tryOf("b", "failed")], 5, device.rerun);
    expect(device.asked).toEqual(["b#1"]);
    expect(done.final[0]?.status).toBe("skipped");
  });

  it("makes no rerun with 0 retries or when nothing failed", async () => {
    const device = fakeDevice({});
    expect((await retryFailedTests([tryOf("b", "failed")], 0, device.rerun)).reruns).toBe(0);
    expect((await retryFailedTests([tryOf("a", "passed")], 5, device.rerun)).reruns).toBe(0);
    expect(device.asked).toEqual([]);
  });

  it("takes a test's last first-run try when it was reported twice", async () => {
    const device = fakeDevice({});
    const done = await retryFailedTests([tryOf("a", "failed"), tryOf("a", "passed")], 2, device.rerun);
    expect(device.asked).toEqual([]);
    expect(done.final).toEqual([tryOf("a", "passed")]);
  });

  it("makes no more tries once a rerun says stop (device lost, cancelled, out of time)", async () => {
    const asked: string[] = [];
    const lost = { status: "errored" as const, message: "device gone", deviceLost: true };
    const done = await retryFailedTests(
      [tryOf("a", "failed"), tryOf("b", "failed")],
      3,
      async (test, retry) => {
        asked.push(`${test.name}#${retry}`);
        return retry === 2 ? { stop: lost } : { tried: tryOf(test.name, "failed", retry) };
      },
    );
    expect(asked).toEqual(["a#1", "a#2"]);
    expect(done.stopped).toBe(lost);
    expect(done.reruns).toBe(1);
    expect(done.final.map((c) => [c.name, c.retry])).toEqual([
      ["a", 1],
      ["b", 0],
    ]);
  });
});
