// Runs for the dashboard to show, made through the API as CI and agents make them: used by the end-to-end test
// and by scripts/screenshots.ts. Two kinds: inspect runs the embedded local agent really runs, and a device run
// reported by a stand-in agent (a real agent needs an Android device), with failures, stack traces and a log.
import { startLocalAgent } from "../../server/src/features/agent/index.ts";
import {
  call,
  registerBasicApp,
  type TestServer,
  uploadBasicTestPackage,
} from "../../server/test/harness.ts";
import { sampleLogcat, sampleScreenshot } from "./sample-captures.ts";

/** The local agent serves every organization; the person and the CI client live in this one. */
export const organization = "default";

export interface Person {
  email: string;
  password: string;
}

/** A member of the organization, as `testbay-server user create --email E --role member` makes one. */
export async function createMember(server: TestServer, email = "dana@example.com"): Promise<Person> {
  const account = await server.app.services.people.createUser({ email, role: "member", org: organization });
  return { email, password: account.password };
}

/** A CI client's headers; `name` names the client (the runs it triggers say it), as `client create --name` does. */
export async function ciHeaders(server: TestServer, name?: string): Promise<Record<string, string>> {
  if (!name) return { "x-api-key": await server.token(await server.createClient(organization, "ci")) };
  const clients = server.app.services.clients;
  // As the harness's createClient does: the organization is made when it is missing.
  await clients.createOrganization(organization).catch(() => undefined);
  return { "x-api-key": await server.token(await clients.createClient(organization, "ci", undefined, name)) };
}

/** The commit every sample run was triggered from. */
export const sampleCommit = "4f2691d0c1e5b7a9d3e8f6a2b4c6d8e0f1a3b5c7";

export async function createPlan(
  server: TestServer,
  ci: Record<string, string>,
  body: Record<string, unknown>,
) {
  const response = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: { package_name: "com.example.basic", ...body },
  });
  if (response.status !== 201) throw new Error(`plan not created: ${JSON.stringify(response.body)}`);
  return response.body.id as string;
}

export async function trigger(
  server: TestServer,
  ci: Record<string, string>,
  planId: string,
  branch: string,
  version = "1.2.3",
): Promise<string> {
  const response = await call(`${server.baseUrl}/testplan/run`, {
    headers: ci,
    json: {
      test_plan_id: planId,
      package_name: "com.example.basic",
      version,
      ci: {
        provider: "github",
        branch,
        commit: sampleCommit,
        build_url: "https://ci.example.com/acme/app/actions/runs/812",
      },
    },
  });
  if (response.status !== 200) throw new Error(`trigger failed: ${JSON.stringify(response.body)}`);
  return response.body.execution.id as string;
}

export async function waitUntilFinished(server: TestServer, ci: Record<string, string>, id: string) {
  const until = Date.now() + 30_000;
  for (;;) {
    const { body } = await call(`${server.baseUrl}/executions/${id}`, { headers: ci });
    if (!["queued", "running"].includes(body.status)) return body;
    if (Date.now() > until) throw new Error(`execution ${id} did not finish: ${JSON.stringify(body)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export interface InspectRuns {
  passed: string;
  failed: string;
}

/**
 * The app com.example.basic 1.2.3 and two inspect runs the local agent runs to the end: one passes, one fails
 * (the APK targets an older SDK than the plan expects).
 */
export async function seedInspectRuns(server: TestServer, ci: Record<string, string>): Promise<InspectRuns> {
  await registerBasicApp(server, ci);
  await startLocalAgent(server.app, server.config, server.app.services.clients, server.baseUrl);
  const smoke = await createPlan(server, ci, {
    name: "Smoke: manifest",
    steps: [{ type: "inspect", expect: { debuggable: false, min_sdk_at_most: 24 } }],
  });
  const strict = await createPlan(server, ci, {
    name: "Release gate: target SDK",
    steps: [{ type: "inspect", expect: { target_sdk_at_least: 35 } }],
  });
  const passed = await trigger(server, ci, smoke, "main");
  await waitUntilFinished(server, ci, passed);
  // The server's clock moves only when told: a minute apart, so "newest first" has an order to show.
  server.clock.advance(60_000);
  const failed = await trigger(server, ci, strict, "release/2.0");
  await waitUntilFinished(server, ci, failed);
  return { passed, failed };
}

const pixel = { serial: "R5CT70XYZ1A", platform: "android", model: "Pixel 8", os_version: "14" } as const;
const galaxy = {
  serial: "emulator-5556",
  platform: "android",
  model: "Galaxy S23",
  os_version: "13",
} as const;

const stack = (where: string) =>
  [
    "java.lang.AssertionError: expected:<Total: 42,00 €> but was:<Total: 0,00 €>",
    "\tat org.junit.Assert.fail(Assert.java:89)",
    "\tat org.junit.Assert.failNotEquals(Assert.java:835)",
    "\tat org.junit.Assert.assertEquals(Assert.java:120)",
    `\tat com.example.basic.${where}(CheckoutTest.kt:58)`,
    "\tat java.lang.reflect.Method.invoke(Native Method)",
    "\tat androidx.test.runner.AndroidJUnitRunner.onStart(AndroidJUnitRunner.java:444)",
  ].join("\n");

/**
 * What the agent kept of a device run, beyond the test cases: a screenshot and logcat cut per failure, the whole
 * device log, and (when given, e.g. one the screenshots script recorded in the browser) the video segment the
 * failures are in, with where in it each failed.
 */
export interface SampleCaptures {
  screenshot?: (variant: number) => Buffer;
  video?: { mp4: Buffer; offsetsMs: readonly number[] };
}

export async function uploadArtifact(
  server: TestServer,
  agent: Record<string, string>,
  lease: string,
  name: string,
  body: Buffer | string,
  contentType: string,
): Promise<void> {
  const put = await fetch(`${server.baseUrl}/agent/jobs/${lease}/artifacts/${name}`, {
    method: "PUT",
    headers: { ...agent, "content-type": contentType },
    // A copy as a plain Uint8Array: the DOM's fetch types (these tests also type browser code) take no Buffer.
    body: typeof body === "string" ? body : new Uint8Array(body),
  });
  if (put.status !== 201) throw new Error(`artifact ${name} refused: ${put.status} ${await put.text()}`);
}

/**
 * An instrumentation run on two Android devices, reported by a stand-in agent ("lab-mac-mini"): 60 tests per
 * device, two failures with stack traces on the Pixel, one skipped test, a log. `finish: false` leaves the second
 * device running (24 tests so far), as a run's page shows while it is live.
 */
export async function seedDeviceRun(
  server: TestServer,
  ci: Record<string, string>,
  options: { finish: boolean; branch: string; version?: string; captures?: SampleCaptures },
): Promise<string> {
  const version = options.version ?? "1.2.3";
  if (version !== "1.2.3") await registerBasicApp(server, ci, version);
  await uploadBasicTestPackage(server, ci, version).catch(() => {
    // uploaded with an earlier run of this version
  });
  const agent = { "x-api-key": await server.token(await server.createClient(organization, "agent")) };
  const plan = await createPlan(server, ci, {
    name: `Checkout: instrumentation (${options.branch})`,
    devices: [
      { platform: "android", model: "Pixel 8" },
      { platform: "android", model: "Galaxy S23" },
    ],
    steps: [{ type: "instrumentation", name: "Instrumentation tests" }],
  });
  const id = await trigger(server, ci, plan, options.branch, version);
  for (const device of [pixel, galaxy]) {
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "lab-mac-mini", devices: [device], step_types: ["inspect", "instrumentation"] },
    });
    if (claimed.status !== 200)
      throw new Error(`claim failed: ${claimed.status} ${JSON.stringify(claimed.body)}`);
    const lease = claimed.body.job.lease_id as string;
    // Time passes on the device, in steps shorter than the lease so the lease never lapses.
    const step = (server.config.leaseTtlSeconds * 1000) / 3;
    const pass = async () => {
      server.clock.advance(step);
      await call(`${server.baseUrl}/agent/jobs/${lease}/heartbeat`, { method: "POST", headers: agent });
    };
    await pass();
    const at = new Date(server.clock.now()).toISOString();
    let seq = 0;
    const log = (line: string) => ({ seq: seq++, type: "log", at, stream: "stdout", line });
    const evidence = (name: string, classname: string) => {
      const failure = files.filter((file) => file.name.includes("/screenshots/")).length;
      const screenshot = `${folder}/screenshots/${classname}.${name}.png`;
      const logcat = `${folder}/logcat/${classname}.${name}.txt`;
      const cut = sampleLogcat(classname, name, new Date(server.clock.now() + failure * 34_000));
      wholeLog.push(cut);
      files.push(
        {
          name: screenshot,
          body: (options.captures?.screenshot ?? sampleScreenshot)(failure),
          type: "image/png",
        },
        { name: logcat, body: cut, type: "text/plain" },
      );
      const video = options.captures?.video;
      if (!video) return { artifacts: [screenshot, logcat] };
      return {
        artifacts: [screenshot, logcat, `${folder}/video/part-01.mp4`],
        video_offset_ms: video.offsetsMs[failure] ?? null,
      };
    };
    const events: unknown[] = [
      { seq: seq++, type: "step_started", at, step_index: 0 },
      log(`adb -s ${device.serial} install -r -t -g com.example.basic.apk`),
      log("Success"),
      log(
        `adb -s ${device.serial} shell am instrument -w -r com.example.basic.test/androidx.test.runner.AndroidJUnitRunner`,
      ),
    ];
    const running = !options.finish && device === galaxy;
    const count = running ? 24 : 60;
    // Files the agent keeps, uploaded before the device run completes (as the agent does), named on the failures.
    const folder = `device-${device.serial}`;
    const files: Array<{ name: string; body: Buffer | string; type: string }> = [];
    const wholeLog: string[] = [];
    for (let n = 0; n < count; n++) {
      const failing = device === pixel && (n === 7 || n === 31);
      const name = failing
        ? n === 7
          ? "totalIncludesVat"
          : "appliesVoucherOnce"
        : `scenario${String(n).padStart(2, "0")}`;
      events.push({
        seq: seq++,
        type: "test_case",
        step_index: 0,
        classname: `com.example.basic.${n < 30 ? "CheckoutTest" : "CartTest"}`,
        name,
        status: failing ? "failed" : n === 45 ? "skipped" : "passed",
        duration_ms: 300 + ((n * 137) % 2400),
        message: failing ? "expected:<Total: 42,00 €> but was:<Total: 0,00 €>" : null,
        details: failing ? stack(`CheckoutTest.${name}`) : null,
        ...(failing ? evidence(name, `com.example.basic.${n < 30 ? "CheckoutTest" : "CartTest"}`) : {}),
      });
    }
    events.push(log(`INSTRUMENTATION_RESULT: stream= Tests run: ${count}`));
    if (!running)
      events.push({
        seq: seq++,
        type: "step_finished",
        at,
        step_index: 0,
        status: device === pixel ? "failed" : "passed",
      });
    const sent = await call(`${server.baseUrl}/agent/jobs/${lease}/events`, {
      headers: agent,
      json: { events },
    });
    if (sent.status !== 200) throw new Error(`events refused: ${JSON.stringify(sent.body)}`);
    if (running) continue;
    if (options.captures?.video && files.length > 0) {
      files.push({
        name: `${folder}/video/part-01.mp4`,
        body: options.captures.video.mp4,
        type: "video/mp4",
      });
    }
    const started = sampleLogcat(
      "com.example.basic.CheckoutTest",
      "scenario00",
      new Date(server.clock.now()),
      false,
    );
    files.push({ name: `${folder}/logcat.txt`, body: [started, ...wholeLog].join(""), type: "text/plain" });
    for (const file of files) await uploadArtifact(server, agent, lease, file.name, file.body, file.type);
    await pass();
    await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
      headers: agent,
      json: { status: device === pixel ? "failed" : "passed" },
    });
  }
  return id;
}
