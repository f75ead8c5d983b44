import { describe, expect, it } from "vitest";
import { call } from "../../server/test/harness.ts";
import { waitFor } from "./agent-process.ts";
import { androidServer } from "./android-server.ts";
import type { DeviceLab, Outcome, SuiteTest } from "./stand-ins/device-lab.ts";

// Sharding end to end (issue 15): a real server, a real `testbay-agent` process with three stand-in devices,
// each shard a device run on its own device. Which tests each device ran is read from the devices themselves:
// the stand-in counts each device's runs of every test with `outcomes` (listings are not runs).

const TEST_PACKAGE = "com.example.basic.test";
const SERIALS = ["emulator-5554", "emulator-5556", "emulator-5558"];

const android = androidServer();

interface TestItem {
  classname: string;
  name: string;
  status: string;
  flaky: boolean;
  shard: number;
  device: { serial: string | null };
  attempts: Array<{ attempt: number; retry: number; status: string }>;
}

const suite = (n: number, durationMs: number, flaky: string | null = null): SuiteTest[] =>
  Array.from({ length: n }, (_, i) => ({
    class: `com.example.basic.Feature${Math.floor(i / 3)}Test`,
    method: `case${i}`,
    outcomes: (`case${i}` === flaky ? ["fail", "pass"] : ["pass"]) as Outcome[],
    duration_ms: durationMs,
  }));
const key = (t: { class: string; method: string }) => `${t.class}#${t.method}`;

async function start(tests: SuiteTest[], step: Record<string, unknown>) {
  const lab = await android.createLab({
    devices: SERIALS.map((serial) => ({ serial, model: "Pixel 7", release: "14", sdk: 34 })),
    suites: { [TEST_PACKAGE]: { tests } },
    timeScale: 0.05,
  });
  const id = await android.triggerInstrumentation("1.0.0", { record_video: "never", ...step });
  android.startAgent("rack-1", lab.env, ["--concurrency", "3"]);
  return { id, lab };
}

async function finished(id: string) {
  const view = await android.finished(id);
  const tests = (await call(`${android.server.baseUrl}/executions/${id}/tests`, { headers: android.ci })).body
    .items as TestItem[];
  return { view, tests };
}

/** Each device's test runs, by serial: "Class#method" → runs. */
const runsBy = (l: DeviceLab) => Object.fromEntries(SERIALS.map((s) => [s, l.testRuns(s)]));

describe("shards on Android devices (stand-in)", () => {
  it("3 shards on three devices run disjoint lists whose union is the listed set, each test once", async () => {
    const tests = suite(12, 400);
    const { id, lab } = await start(tests, { shards: 3, sharding: "uniform" });
    const { view, tests: items } = await finished(id);
    expect(view.status).toBe("passed");
    expect(view.summary).toMatchObject({ tests: 12, passed: 12, failed: 0 });
    expect(view.devices).toHaveLength(3);

    const runs = runsBy(lab);
    const ranOn = SERIALS.map((serial) => Object.keys(runs[serial] ?? {}).sort());
    // uniform: a fixed list of 4 per shard, so every device ran some; none ran a test twice, none another's.
    expect(ranOn.map((list) => list.length)).toEqual([4, 4, 4]);
    for (const serial of SERIALS) expect(Object.values(runs[serial] ?? {}).every((n) => n === 1)).toBe(true);
    expect(ranOn.flat().sort()).toEqual(tests.map(key).sort());
    // Each device ran exactly the batch files it was handed (pushed, then run with -e testFile).
    for (const serial of SERIALS) {
      const argv = lab
        .calls()
        .filter((c) => c.serial === serial)
        .map((c) => c.argv.slice(2).join(" "));
      expect(argv.filter((a) => a.includes("'testFile'"))).toHaveLength(1);
      expect(argv.filter((a) => a.startsWith("push "))).toHaveLength(1);
    }

    // The results say the same, each test once with the shard (and device) of the run that ran it.
    expect(items).toHaveLength(12);
    expect(items.map((t) => `${t.classname}#${t.name}`).sort()).toEqual(tests.map(key).sort());
    const shardOf = new Map<string, number>();
    for (const item of items) {
      const serial = item.device.serial as string;
      expect(Object.keys(runs[serial] ?? {})).toContain(`${item.classname}#${item.name}`);
      expect(shardOf.get(serial) ?? item.shard).toBe(item.shard);
      shardOf.set(serial, item.shard);
    }
    expect([...shardOf.values()].sort()).toEqual([0, 1, 2]);
  });

  it("a device unplugged mid-run hands its remaining tests to the others: every test reported once", async () => {
    const tests = suite(18, 3000);
    const { id, lab } = await start(tests, { shards: 3 });
    // The first device to start a batch goes away in the middle of it.
    const lost = await waitFor("a device to start a batch", async () => {
      const call = lab.calls().find((c) => c.argv.join(" ").includes("'testFile'"));
      return call?.serial ?? undefined;
    });
    lab.unplug(lost);
    const { view, tests: items } = await finished(id);
    expect(view.status).toBe("passed");
    expect(view.summary).toMatchObject({ tests: 18, passed: 18, failed: 0 });
    // The lost device's run was handed back and ran again (a second attempt) on a device still there.
    const attempts = view.devices.map((d: { attempt: number }) => d.attempt).sort();
    expect(attempts).toEqual([1, 1, 2]);

    expect(items).toHaveLength(18);
    expect(items.map((t) => `${t.classname}#${t.name}`).sort()).toEqual(tests.map(key).sort());
    for (const item of items) {
      expect(item.status).toBe("passed");
      expect(item.device.serial).not.toBe(lost);
    }
    // Every test ran on a device still there; the lost one ran at most the batch it was in.
    const runs = runsBy(lab);
    const survivors = SERIALS.filter((s) => s !== lost);
    const ranOnSurvivors = survivors.flatMap((s) => Object.keys(runs[s] ?? {}));
    expect(new Set(ranOnSurvivors)).toEqual(new Set(tests.map(key)));
  });

  it("with retry_failed_tests, a flaky test in a shard is flaky and counted once", async () => {
    const tests = suite(9, 400, "case4");
    const { id, lab } = await start(tests, { shards: 3, sharding: "uniform", retry_failed_tests: 2 });
    const { view, tests: items } = await finished(id);
    expect(view.status).toBe("passed");
    expect(view.summary).toMatchObject({ tests: 9, passed: 9, failed: 0, flaky: 1 });
    expect(items).toHaveLength(9);
    const flaky = items.find((t) => t.name === "case4") as TestItem;
    expect(flaky).toMatchObject({ status: "passed", flaky: true });
    expect(flaky.attempts.map((a) => [a.retry, a.status])).toEqual([
      [0, "failed"],
      [1, "passed"],
    ]);
    // Rerun alone on the device of its shard, nowhere else.
    const runs = runsBy(lab);
    const where = SERIALS.filter((s) => runs[s]?.[`${tests[4]?.class}#case4`] !== undefined);
    expect(where).toEqual([flaky.device.serial]);
    expect(runs[where[0] as string]?.[`${tests[4]?.class}#case4`]).toBe(2);
    expect(items.filter((t) => t.flaky)).toHaveLength(1);
  });

  it("a maestro step's flows are split over the shards, each flow run once, a flaky one rerun alone", async () => {
    const lab = await android.createLab({
      devices: SERIALS.map((serial) => ({ serial, model: "Pixel 7", release: "14", sdk: 34 })),
      suites: {},
      timeScale: 0.05,
    });
    const names = Array.from({ length: 9 }, (_, i) => `Checkout ${i}`);
    // The sixth flow has no config name: maestro names it after its file, flow-06.
    const flows = names.map((name, i) =>
      i === 5
        ? "appId: com.example.basic\n---\n- launchApp\n"
        : `appId: com.example.basic\nname: ${name}\n---\n- launchApp\n- assertVisible: "${i === 2 ? "FAIL 1x total" : "Total"}"\n`,
    );
    const id = await android.triggerStep("1.0.0", {
      type: "maestro",
      flows,
      shards: 3,
      retry_failed_tests: 1,
      record_video: "never",
    });
    android.startAgent("rack-1", lab.env, ["--concurrency", "3"]);
    const { view, tests: items } = await finished(id);
    expect(view.status).toBe("passed");
    expect(view.summary).toMatchObject({ tests: 9, passed: 9, failed: 0, flaky: 1 });
    const expected = names.map((name, i) => (i === 5 ? "flow-06" : name)).sort();
    expect(items.map((t) => t.name).sort()).toEqual(expected);
    expect(items.find((t) => t.name === "Checkout 2")).toMatchObject({ flaky: true, status: "passed" });

    // Each flow ran on one device only, once (the flaky one twice, there); the three devices shared them.
    const runs = runsBy(lab);
    const ran = SERIALS.flatMap((serial) =>
      Object.entries(runs[serial] ?? {}).map(([flow, n]) => [serial, flow, n]),
    );
    expect(ran.map(([, flow]) => flow).sort()).toEqual(expected.map((name) => `flow:${name}`).sort());
    for (const [, flow, n] of ran) expect(n).toBe(flow === "flow:Checkout 2" ? 2 : 1);
    for (const item of items)
      expect(Object.keys(runs[item.device.serial as string] ?? {})).toContain(`flow:${item.name}`);
    expect(new Set(items.map((t) => t.shard)).size).toBeGreaterThan(1);
  });
});
