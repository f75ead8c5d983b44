// A sharded instrumentation step on the stateful adb stand-in, against a fake of the server's half of the
// protocol (the first listing plans; next-batch hands out a shared queue): each device runs the batches it
// takes as a pushed testFile, and a device lost mid-batch leaves its batch for the others.
import { statSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { InstrumentationStep, ShardTest } from "@testbay/client";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createDeviceLab, type DeviceLab, type SuiteTest } from "../../test/stand-ins/device-lab.ts";
import { runInstrumentationStep } from "./instrumentation-step.ts";
import type { ShardContext } from "./step-types.ts";
import { ANDROID_BINARY, makeStepContext, type TestStepContext } from "./test-context.ts";

const binaries = fileURLToPath(new URL("../../../server/test/fixtures/binaries/", import.meta.url));
const APP = join(binaries, "app-basic.apk");
const TEST_APK = join(binaries, "app-basic-androidTest.apk");
const TEST_PACKAGE = "com.example.basic.test";
const RUNNER = "androidx.test.runner.AndroidJUnitRunner";
const SERIALS = ["emulator-5554", "emulator-5556", "emulator-5558"];

let lab: DeviceLab | undefined;
const contexts: TestStepContext[] = [];

afterEach(async () => {
  vi.unstubAllEnvs();
  for (const ctx of contexts.splice(0)) await ctx.cleanup();
  lab?.cleanup();
  lab = undefined;
});

/** The server's half, faked: batches of `size` tests in listed order, one queue all shards take from. */
function fakeServer(size: number, onTake?: (batchId: string) => void) {
  let batches: Array<{ id: string; tests: ShardTest[]; state: string; by: number | null }> | null = null;
  let listings = 0;
  const shard = (index: number, count: number): ShardContext => ({
    index,
    count,
    listTests: async (tests) => {
      listings++;
      const planned = batches === null;
      batches ??= Array.from({ length: Math.ceil(tests.length / size) }, (_, i) => ({
        id: `b${i + 1}`,
        tests: tests.slice(i * size, (i + 1) * size),
        state: "queued",
        by: null,
      }));
      return { planned, batches: batches.length, tests: tests.length, sharding: "duration" };
    },
    nextBatch: async (finished) => {
      const queue = batches ?? [];
      const done = queue.find((b) => b.id === finished && b.by === index);
      if (done) done.state = "done";
      const next = queue.find((b) => b.state === "queued");
      if (!next) return null;
      next.state = "running";
      next.by = index;
      onTake?.(next.id);
      return { id: next.id, tests: next.tests };
    },
  });
  return { shard, batches: () => batches ?? [], listings: () => listings };
}

async function setUp(tests: SuiteTest[]) {
  lab = await createDeviceLab({
    devices: SERIALS.map((serial) => ({ serial, model: "Pixel 7" })),
    suites: { [TEST_PACKAGE]: { tests } },
    timeScale: 0.05,
  });
  for (const [name, value] of Object.entries(lab.env)) vi.stubEnv(name, value);
  return lab;
}

async function contextFor(serial: string, shard: ShardContext) {
  const ctx = await makeStepContext({
    device: { serial, platform: "android", model: "Pixel 7", os_version: "14" },
    appPath: async () => APP,
    binary: { ...ANDROID_BINARY, package_name: "com.example.basic" },
    packageName: "com.example.basic",
    testPackage: {
      format: "apk",
      sha256: "0".repeat(64),
      size_bytes: statSync(TEST_APK).size,
      test: { package_name: TEST_PACKAGE, runner: RUNNER, target_package: "com.example.basic" },
    },
    testPackagePath: async () => TEST_APK,
    shard,
  });
  contexts.push(ctx);
  return ctx;
}

const step: InstrumentationStep = { type: "instrumentation", record_video: "never" };
const suite = (n: number): SuiteTest[] =>
  Array.from({ length: n }, (_, i) => ({
    class: `com.example.basic.T${Math.floor(i / 4)}`,
    method: `m${i}`,
    // `outcomes` makes the stand-in count each device's runs of the test (listings are not runs).
    outcomes: ["pass"],
    duration_ms: 100,
  }));
const names = (ctx: TestStepContext) => ctx.cases.map((c) => `${c.classname}#${c.name}`);

describe("a sharded instrumentation step", () => {
  it("runs on three devices the batches each takes from one queue: disjoint, together the listed set", async () => {
    const lab = await setUp(suite(12));
    const server = fakeServer(2);
    const ctxs = await Promise.all(SERIALS.map((serial, i) => contextFor(serial, server.shard(i, 3))));
    const outcomes = await Promise.all(ctxs.map((ctx) => runInstrumentationStep(step, ctx)));
    expect(outcomes.map((o) => o.status)).toEqual(["passed", "passed", "passed"]);
    const all = ctxs.flatMap(names);
    expect(new Set(all).size).toBe(all.length);
    expect(all.sort()).toEqual(
      suite(12)
        .map((t) => `${t.class}#${t.method}`)
        .sort(),
    );
    expect(server.listings()).toBe(3);
    expect(server.batches().map((b) => b.state)).toEqual(Array(6).fill("done"));
    // Each batch ran as a testFile pushed to the device that took it, then removed from it.
    for (const batch of server.batches()) {
      const serial = SERIALS[batch.by as number] as string;
      const remote = `/data/local/tmp/testbay-batch-${batch.id}.txt`;
      const calls = lab
        .calls()
        .filter((c) => c.serial === serial)
        .map((c) => c.argv.slice(2).join(" "));
      expect(calls.some((c) => c.startsWith("push ") && c.endsWith(` ${remote}`))).toBe(true);
      expect(calls).toContain(
        `shell am instrument -w -r -e 'testFile' '${remote}' '${TEST_PACKAGE}/${RUNNER}'`,
      );
      expect(lab.files(serial)[remote]).toBeUndefined();
    }
    // The devices themselves say which tests ran on them, each once: the same split.
    for (const [i, serial] of SERIALS.entries()) {
      const runs = lab.testRuns(serial);
      expect(Object.values(runs).every((n) => n === 1)).toBe(true);
      expect(Object.keys(runs).sort()).toEqual(names(ctxs[i] as TestStepContext).sort());
    }
  });

  it("a parameterized method split over batches reports only each batch's own indices", async () => {
    await setUp([
      { class: "com.example.basic.P", method: "m[0]", outcome: "pass", duration_ms: 50 },
      { class: "com.example.basic.P", method: "m[1]", outcome: "pass", duration_ms: 50 },
      { class: "com.example.basic.P", method: "m[2]", outcome: "fail", duration_ms: 50 },
    ]);
    const server = fakeServer(1);
    const ctx = await contextFor(SERIALS[0] as string, server.shard(0, 1));
    const outcome = await runInstrumentationStep({ ...step, shards: 2 } as InstrumentationStep, ctx);
    expect(ctx.cases.map((c) => [c.name, c.status])).toEqual([
      ["m[0]", "passed"],
      ["m[1]", "passed"],
      ["m[2]", "failed"],
    ]);
    expect(outcome).toEqual({ status: "failed", message: "1 of 3 test cases failed" });
  });

  it("a device lost mid-batch hands the run back and leaves its batch held (the server re-queues it)", async () => {
    const lab = await setUp(suite(6));
    // The device goes after one test of the second batch.
    const server = fakeServer(2, (id) => {
      if (id === "b2") lab.setSuite(TEST_PACKAGE, { tests: suite(6), vanishAfterTests: 1 });
    });
    const ctx = await contextFor(SERIALS[0] as string, server.shard(0, 2));
    const outcome = await runInstrumentationStep(step, ctx);
    expect(outcome).toMatchObject({ status: "errored", deviceLost: true });
    // The first batch was reported and marked done; the second one was under way, and the test of it that
    // ended before the device went is reported too (history of this attempt once another shard reruns it).
    expect(server.batches().map((b) => b.state)).toEqual(["done", "running", "queued"]);
    expect(names(ctx)).toEqual([
      "com.example.basic.T0#m0",
      "com.example.basic.T0#m1",
      "com.example.basic.T0#m2",
    ]);
  });

  it("a shard that finds no batch left passes with no tests", async () => {
    await setUp(suite(2));
    const server = fakeServer(2);
    const first = await contextFor(SERIALS[0] as string, server.shard(0, 2));
    expect((await runInstrumentationStep(step, first)).status).toBe("passed");
    const late = await contextFor(SERIALS[1] as string, server.shard(1, 2));
    expect(await runInstrumentationStep(step, late)).toEqual({ status: "passed", message: null });
    expect(late.cases).toEqual([]);
    expect(late.lines("agent")).toContain(
      "no batch was left for this shard: the other shards ran every test",
    );
  });
});
