// A sharded run with retries, reported by a stand-in agent as a real one reports it (issue 15): one device entry
// (Pixel 8) split into three shards, each claimed by a device of its own, failed tests rerun alone up to twice.
// One test fails once and passes on its rerun (flaky), one fails every try; each failing try carries its own
// screenshot and logcat cut. Used by the end-to-end test and by scripts/screenshots.ts.
import {
  call,
  registerBasicApp,
  type TestServer,
  uploadBasicTestPackage,
} from "../../server/test/harness.ts";
import { sampleLogcat, sampleScreenshot } from "./sample-captures.ts";
import { createPlan, organization, trigger, uploadArtifact } from "./sample-data.ts";

export const shardedPlanName = "Checkout: sharded with retries";
/** The test that fails its first try and passes its rerun, on the second shard. */
export const flakyTest = { classname: "com.example.basic.VoucherTest", name: "appliesVoucherOnce" };
/** The test that fails all three of its tries, on the third shard. */
export const failingTest = { classname: "com.example.basic.PaymentTest", name: "paysWithSavedCard" };
export const testsPerShard = 8;

const serials = ["R5CT70XYZ1A", "R5CT70XYZ2B", "R5CT70XYZ3C"] as const;

interface SampleTry {
  status: "passed" | "failed";
  message?: string;
}

/** What each test of a shard does, try by try: most pass at once. */
function triesOf(shard: number, n: number): { classname: string; name: string; tries: SampleTry[] } {
  if (shard === 1 && n === 2) {
    return {
      ...flakyTest,
      tries: [{ status: "failed", message: "Voucher banner not shown within 5 s" }, { status: "passed" }],
    };
  }
  if (shard === 2 && n === 5) {
    const declined = { status: "failed" as const, message: "Payment sheet closed: card declined (code 51)" };
    return { ...failingTest, tries: [declined, declined, declined] };
  }
  const suite = ["CartTest", "CatalogTest", "SearchTest"][shard] ?? "CartTest";
  return {
    classname: `com.example.basic.${suite}`,
    name: `case${String(n).padStart(2, "0")}`,
    tries: [{ status: "passed" }],
  };
}

/** Triggers the plan and runs its three shards to the end; returns the execution's id. */
export async function seedShardedRun(
  server: TestServer,
  ci: Record<string, string>,
  options: { branch?: string } = {},
): Promise<string> {
  await registerBasicApp(server, ci).catch(() => {
    // registered with an earlier sample
  });
  await uploadBasicTestPackage(server, ci, "1.2.3").catch(() => {
    // uploaded with an earlier run of this version
  });
  const agent = { "x-api-key": await server.token(await server.createClient(organization, "agent")) };
  const plan = await createPlan(server, ci, {
    name: shardedPlanName,
    devices: [{ platform: "android", model: "Pixel 8" }],
    steps: [
      {
        type: "instrumentation",
        name: "UI tests",
        shards: 3,
        sharding: "uniform",
        retry_failed_tests: 2,
      },
    ],
  });
  const id = await trigger(server, ci, plan, options.branch ?? "main");
  for (const serial of serials) {
    const device = { serial, platform: "android", model: "Pixel 8", os_version: "14" };
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "lab-rack-2", devices: [device], step_types: ["instrumentation"] },
    });
    if (claimed.status !== 200 || !claimed.body.job) {
      throw new Error(`claim failed: ${claimed.status} ${JSON.stringify(claimed.body)}`);
    }
    const lease = claimed.body.job.lease_id as string;
    const shard = claimed.body.job.device_run.shard as number;
    server.clock.advance(20_000);
    const at = new Date(server.clock.now()).toISOString();
    let seq = 0;
    const log = (line: string) => ({ seq: seq++, type: "log", at, stream: "stdout", line });
    const events: unknown[] = [
      { seq: seq++, type: "step_started", at, step_index: 0 },
      log(
        `adb -s ${serial} shell am instrument -w -r -e testFile /data/local/tmp/testbay-batch-${shard + 1}.txt com.example.basic.test/androidx.test.runner.AndroidJUnitRunner`,
      ),
    ];
    const folder = `device-${serial}`;
    let failed = false;
    for (let n = 0; n < testsPerShard; n++) {
      const test = triesOf(shard, n);
      for (const [retry, one] of test.tries.entries()) {
        const artifacts: string[] = [];
        if (one.status === "failed") {
          // Each try's captures are its own: the screenshot and logcat cut of that very run of the test.
          const stem = `${test.classname}.${test.name}.try${retry + 1}`;
          const screenshot = `${folder}/screenshots/${stem}.png`;
          const logcat = `${folder}/logcat/${stem}.txt`;
          await uploadArtifact(
            server,
            agent,
            lease,
            screenshot,
            sampleScreenshot(shard * 3 + retry),
            "image/png",
          );
          const cut = sampleLogcat(test.classname, test.name, new Date(server.clock.now()));
          await uploadArtifact(server, agent, lease, logcat, cut, "text/plain");
          artifacts.push(screenshot, logcat);
        }
        events.push({
          seq: seq++,
          type: "test_case",
          step_index: 0,
          classname: test.classname,
          name: test.name,
          status: one.status,
          duration_ms: 900 + ((n * 613 + retry * 211) % 3200),
          message: one.message ?? null,
          details: one.message
            ? `java.lang.AssertionError: ${one.message}\n\tat ${test.classname}.${test.name}`
            : null,
          retry,
          ...(artifacts.length > 0 ? { artifacts } : {}),
        });
      }
      failed ||= test.tries.at(-1)?.status === "failed";
    }
    events.push(log(`Shard ${shard + 1} of 3: ${testsPerShard} tests run`));
    events.push({
      seq: seq++,
      type: "step_finished",
      at,
      step_index: 0,
      status: failed ? "failed" : "passed",
    });
    const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
      headers: agent,
      json: { events },
    });
    if (sent.status !== 200) throw new Error(`events refused: ${JSON.stringify(sent.body)}`);
    server.clock.advance(20_000);
    const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
      headers: agent,
      json: { status: failed ? "failed" : "passed" },
    });
    if (done.status !== 200) throw new Error(`complete refused: ${JSON.stringify(done.body)}`);
  }
  return id;
}
