// A run whose plan pulls folders off the device and asks for coverage (API.md §14), reported by a stand-in agent
// the way the real one uploads them (packages/agent/src/android/device-files.ts): one device entry (Pixel 8) in
// two shards, each leaving its Allure results and screenshots as `pulled/<shard>/<device path>` and its JaCoCo
// file as `coverage/<shard>/testbay-<shard>.ec`; the failed test's own screenshot stays a capture of that test.
// Used by the browser test (device-files.int.test.ts) and by scripts/screenshots.ts.
import {
  call,
  registerBasicApp,
  type TestServer,
  uploadBasicTestPackage,
} from "../../server/test/harness.ts";
import { sampleScreenshot } from "./sample-captures.ts";
import { createPlan, organization, trigger, uploadArtifact } from "./sample-data.ts";

export const deviceFilesPlanName = "Checkout: Allure results and coverage";
export const pullPaths = ["/sdcard/allure-results", "/sdcard/Pictures/screenshots"] as const;
const serials = ["R5CT70XYZ4D", "R5CT70XYZ5E"] as const;
/** The test that fails, on the second shard: its screenshot is a capture of the test, not a pulled file. */
export const failingTest = { classname: "com.example.basic.CheckoutTest", name: "paysWithVoucher" };

export interface PulledSample {
  name: string;
  body: Buffer | string;
  contentType: string;
}

/** What shard `shard` left in the pulled folders: an Allure result per test, its attachments, two screenshots. */
export function pulledFiles(shard: number): PulledSample[] {
  const tests =
    shard === 0 ? ["addsItem", "removesItem", "emptiesCart"] : ["paysWithCard", "paysWithVoucher"];
  const files: PulledSample[] = tests.map((test, n) => {
    const uuid = `${shard}f3c${n}a9e-5d1b-4c7e-9a2f-7b8e6d4c${String(n).padStart(4, "0")}`;
    const failed = test === failingTest.name;
    return {
      name: `pulled/${shard}/sdcard/allure-results/${uuid}-result.json`,
      body: JSON.stringify({
        uuid,
        name: test,
        fullName: `com.example.basic.${shard === 0 ? "CartTest" : "CheckoutTest"}.${test}`,
        status: failed ? "failed" : "passed",
        statusDetails: failed ? { message: "Voucher field not found" } : {},
        attachments: failed ? [{ name: "screen", source: `${uuid}-attachment.png`, type: "image/png" }] : [],
      }),
      contentType: "application/json",
    };
  });
  if (shard === 1) {
    files.push({
      name: `pulled/${shard}/sdcard/allure-results/${shard}f3c1a9e-5d1b-4c7e-9a2f-7b8e6d4c0001-attachment.png`,
      body: sampleScreenshot(4),
      contentType: "image/png",
    });
  }
  files.push(
    {
      name: `pulled/${shard}/sdcard/allure-results/environment.properties`,
      body: "device=Pixel 8\nandroid=14\n",
      contentType: "application/octet-stream",
    },
    {
      name: `pulled/${shard}/sdcard/Pictures/screenshots/home-${shard * 2 + 1}.png`,
      body: sampleScreenshot(shard * 2),
      contentType: "image/png",
    },
    {
      name: `pulled/${shard}/sdcard/Pictures/screenshots/home-${shard * 2 + 2}.png`,
      body: sampleScreenshot(shard * 2 + 1),
      contentType: "image/png",
    },
  );
  return files;
}

/** JaCoCo execution data starts with its block type 0x01 and magic 0xC0C0 (org.jacoco.core ExecutionDataWriter). */
function coverageFile(shard: number): Buffer {
  const header = Buffer.from([0x01, 0xc0, 0xc0, 0x10, 0x07]);
  return Buffer.concat([header, Buffer.alloc(2_000 + shard * 500, shard + 1)]);
}

export const coverageName = (shard: number) => `coverage/${shard}/testbay-${shard}.ec`;

/** Triggers the plan and runs its two shards to the end, files and all; returns the execution's id. */
export async function seedDeviceFilesRun(
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
    name: deviceFilesPlanName,
    devices: [{ platform: "android", model: "Pixel 8" }],
    steps: [
      {
        type: "instrumentation",
        name: "UI tests",
        shards: 2,
        sharding: "uniform",
        pull: pullPaths,
        coverage: true,
      },
    ],
  });
  const id = await trigger(server, ci, plan, options.branch ?? "main");
  for (const serial of serials) {
    const device = { serial, platform: "android", model: "Pixel 8", os_version: "14" };
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "lab-rack-3", devices: [device], step_types: ["instrumentation"] },
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
    const events: unknown[] = [{ seq: seq++, type: "step_started", at, step_index: 0 }];
    const tests = pulledFiles(shard).filter((file) => file.name.endsWith("-result.json"));
    for (const [n, result] of tests.entries()) {
      const { name, fullName, status } = JSON.parse(result.body as string);
      const classname = fullName.slice(0, fullName.lastIndexOf("."));
      const artifacts: string[] = [];
      if (status === "failed") {
        const screenshot = `device-${serial}/screenshots/${classname}.${name}.png`;
        await uploadArtifact(server, agent, lease, screenshot, sampleScreenshot(5), "image/png");
        artifacts.push(screenshot);
      }
      events.push({
        seq: seq++,
        type: "test_case",
        step_index: 0,
        classname,
        name,
        status,
        duration_ms: 1_100 + n * 350,
        message: status === "failed" ? "Voucher field not found" : null,
        ...(artifacts.length > 0 ? { artifacts } : {}),
      });
    }
    for (const file of pulledFiles(shard)) {
      await uploadArtifact(server, agent, lease, file.name, file.body, file.contentType);
    }
    await uploadArtifact(
      server,
      agent,
      lease,
      coverageName(shard),
      coverageFile(shard),
      "application/octet-stream",
    );
    const failed = shard === 1;
    events.push(
      log(`adb -s ${serial} pull /sdcard/allure-results`),
      log(`adb -s ${serial} pull /sdcard/Pictures/screenshots`),
      log(`adb -s ${serial} pull /sdcard/Download/testbay-${shard}.ec`),
      { seq: seq++, type: "step_finished", at, step_index: 0, status: failed ? "failed" : "passed" },
    );
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
