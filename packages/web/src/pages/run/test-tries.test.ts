import { describe, expect, it } from "vitest";
import type { TestCase } from "../../api/types.ts";
import { hasTries, passedOnRetry, type TestTry, triesInWords, tryLabel } from "./test-tries.ts";

const attempt = (fields: Partial<TestTry>): TestTry => ({
  attempt: 1,
  retry: 0,
  status: "passed",
  duration_ms: 800,
  message: null,
  artifacts: [],
  ...fields,
});

const test = (fields: Partial<TestCase>): TestCase => ({
  id: "t_1",
  classname: "com.example.CartTest",
  name: "addsItem",
  status: "passed",
  flaky: false,
  quarantined: false,
  duration_ms: 800,
  message: null,
  stack_trace: null,
  device: { position: 0, platform: "android", serial: "emulator-5554", model: "Pixel 8", os_version: "14" },
  shard: 0,
  attempt: 1,
  attempts: [attempt({})],
  artifacts: [],
  video_offset_ms: null,
  ...fields,
});

describe("a test's tries", () => {
  const reruns = [attempt({ status: "failed", message: "boom" }), attempt({ retry: 1 })];

  it("shows the tries of a test that ran more than once", () => {
    expect(hasTries(test({ attempts: reruns }))).toBe(true);
    expect(hasTries(test({}))).toBe(false);
  });

  it("lists as passed on retry only the flaky tests that passed in the end", () => {
    const flaky = test({ id: "t_flaky", flaky: true, attempts: reruns });
    const failing = test({ id: "t_failing", status: "failed", attempts: [attempt({ status: "failed" })] });
    expect(passedOnRetry([failing, flaky, test({ id: "t_plain" })]).map((t) => t.id)).toEqual(["t_flaky"]);
  });

  it("names each try, with the device run's attempt only when there were several", () => {
    expect(tryLabel(reruns, 0)).toBe("Try 1");
    expect(tryLabel(reruns, 1)).toBe("Try 2 · rerun alone");
    const acrossAttempts = [attempt({ status: "errored" }), attempt({ attempt: 2 })];
    expect(tryLabel(acrossAttempts, 1)).toBe("Try 2 · attempt 2 of the device run");
    expect(triesInWords(reruns)).toBe("failed, then passed");
  });
});
