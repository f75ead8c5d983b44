import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import { maxSchedulesPerPlan } from "./schedules.service.ts";

// The schedules API (API.md §15) and what a due time does, on the test's database (sqlite or postgres). The
// server's clock moves only when the test moves it, and each instance looks for due times every 20 ms, so a time
// fires once the test has moved the clock past it.

let server: TestServer;
let acme: Record<string, string>;
let globex: Record<string, string>;
let agent: Record<string, string>;
let acmeClientId: string;

const inspect = { type: "inspect", expect: { debuggable: false } };

async function createPlan(name = "nightly", headers = acme): Promise<string> {
  const response = await call(`${server.baseUrl}/testplans`, {
    headers,
    json: { name, package_name: "com.example.basic", steps: [inspect] },
  });
  expect(response.status).toBe(201);
  return response.body.id;
}

const schedulesOf = (planId: string, headers = acme) =>
  call(`${server.baseUrl}/testplans/${planId}/schedules`, { headers });
const createSchedule = (planId: string, json: unknown, headers = acme) =>
  call(`${server.baseUrl}/testplans/${planId}/schedules`, { headers, json });
const patchSchedule = (id: string, json: unknown, headers = acme) =>
  call(`${server.baseUrl}/schedules/${id}`, { method: "PATCH", headers, json });
const deleteSchedule = (id: string, headers = acme) =>
  call(`${server.baseUrl}/schedules/${id}`, { method: "DELETE", headers });

async function scheduleOf(planId: string, id: string): Promise<ScheduleBody | undefined> {
  const { body } = await schedulesOf(planId);
  return (body.items as ScheduleBody[]).find((item) => item.id === id);
}

const basicApk = new URL("../../../test/fixtures/binaries/app-basic.apk", import.meta.url);

/** Uploads the basic APK as `version` of com.example.basic; one already there is kept (409). */
async function upload(version: string) {
  const response = await fetch(`${server.baseUrl}/apps/com.example.basic/versions/${version}`, {
    method: "PUT",
    headers: acme,
    body: await readFile(basicApk),
  });
  expect([201, 409]).toContain(response.status);
}

interface ScheduleBody {
  id: string;
  next_run_at: string;
  last_result: { scheduled_for: string; outcome: string; execution_id: string | null } | null;
}

beforeAll(async () => {
  server = await startTestServer({
    env: {
      TESTBAY_SCHEDULES_TICK_MS: "20",
      TESTBAY_RATE_LIMIT_BURST: "100000",
      TESTBAY_AGENT_RATE_LIMIT_BURST: "100000",
    },
  });
  const acmeClient = await server.createClient("acme", "ci");
  acmeClientId = acmeClient.client_id;
  acme = { "x-api-key": await server.token(acmeClient) };
  globex = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await call(`${server.baseUrl}/apps`, {
    headers: acme,
    json: { package_name: "com.example.basic", platform: "android" },
  });
  await call(`${server.baseUrl}/apps`, {
    headers: globex,
    json: { package_name: "com.example.basic", platform: "android" },
  });
});
afterAll(() => server.close());

describe("POST /v1/testplans/{id}/schedules", () => {
  it("answers 201 with the next time, read in the time zone (UTC by default)", async () => {
    // The test server's clock starts at 2026-01-01T00:00:00Z.
    const plan = await createPlan();
    const utc = await createSchedule(plan, { cron: "0 2 * * *", version: "latest" });
    expect(utc.status).toBe(201);
    expect(utc.body).toEqual({
      id: expect.stringMatching(/^sch_/),
      test_plan_id: plan,
      cron: "0 2 * * *",
      timezone: "UTC",
      version: "latest",
      next_run_at: "2026-01-01T02:00:00.000Z",
      enabled: true,
      last_result: null,
      created_at: "2026-01-01T00:00:00.000Z",
      updated_at: "2026-01-01T00:00:00.000Z",
    });
    // 02:00 in Berlin in January is 01:00 UTC (CET, +01:00); a six-field cron counts seconds.
    const berlin = await createSchedule(plan, {
      cron: "0 2 * * *",
      timezone: "Europe/Berlin",
      version: "latest:branch=main",
    });
    expect(berlin.body).toMatchObject({ timezone: "Europe/Berlin", next_run_at: "2026-01-01T01:00:00.000Z" });
    const seconds = await createSchedule(plan, { cron: "*/30 * * * * *", timezone: "utc", version: "1.2.3" });
    expect(seconds.body).toMatchObject({ timezone: "UTC", next_run_at: "2026-01-01T00:00:30.000Z" });

    const listed = await schedulesOf(plan);
    expect(listed.status).toBe(200);
    // Made in the same millisecond of the test's clock: their order among themselves is their IDs'.
    expect(listed.body.items.map((item: { id: string }) => item.id)).toEqual(
      [utc.body.id, berlin.body.id, seconds.body.id].sort(),
    );
    for (const created of [utc, berlin, seconds]) await deleteSchedule(created.body.id);
  });

  it.each([
    [{ cron: "61 * * * *", version: "latest" }, "/cron", /minute: 61/, /five fields/],
    [{ cron: "* * * *", version: "latest" }, "/cron", /not a cron expression/, /five fields/],
    [{ cron: "0 0 30 2 *", version: "latest" }, "/cron", /February 30th/, /days of the month/],
    [{ cron: "0 2 * * *", timezone: "Berlin", version: "latest" }, "/timezone", /IANA/, /Europe\/Berlin/],
    [{ cron: "0 2 * * *", version: "latest:main" }, "/version", /not "latest"/, /latest:branch=main/],
    [{ cron: "0 2 * * *", version: "latest:branch=" }, "/version", /not "latest"/, /latest:branch=main/],
  ])("refuses %j with 400 invalid_request naming the field, and a fix", async (body, path, message, fix) => {
    const plan = await createPlan();
    const refused = await createSchedule(plan, body);
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_request");
    expect(refused.body.errors).toEqual([{ path, in: "body", message: expect.stringMatching(message) }]);
    expect(refused.body.fix).toMatch(fix);
    expect((await schedulesOf(plan)).body.items).toEqual([]);
  });

  it("does not schedule another organization's plan, an archived one, or past 20 a plan", async () => {
    const plan = await createPlan();
    const foreign = await createSchedule(plan, { cron: "0 2 * * *", version: "latest" }, globex);
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe("test_plan_not_found");
    expect((await schedulesOf(plan, globex)).status).toBe(404);

    const archived = await createPlan("old");
    await call(`${server.baseUrl}/testplans/${archived}/archive`, { method: "POST", headers: acme });
    const onArchived = await createSchedule(archived, { cron: "0 2 * * *", version: "latest" });
    expect(onArchived.status).toBe(404);
    expect(onArchived.body).toMatchObject({ code: "test_plan_not_found", reason: "archived" });
    expect(onArchived.body.fix).toMatch(/restore/);

    const asAgent = await createSchedule(plan, { cron: "0 2 * * *", version: "latest" }, agent);
    expect(asAgent.status).toBe(403);

    const ids: string[] = [];
    for (let i = 0; i < maxSchedulesPerPlan; i++) {
      const created = await createSchedule(plan, { cron: `${i} 2 * * *`, version: "latest" });
      expect(created.status).toBe(201);
      ids.push(created.body.id);
    }
    const tooMany = await createSchedule(plan, { cron: "0 3 * * *", version: "latest" });
    expect(tooMany.status).toBe(400);
    expect(tooMany.body).toMatchObject({ code: "invalid_request", reason: "too_many_schedules" });
    expect(tooMany.body.fix).toMatch(/0 2,14 \* \* \*/);
    for (const id of ids) expect((await deleteSchedule(id)).status).toBe(204);
  });
});

describe("PATCH and DELETE /v1/schedules/{id}", () => {
  it("moves the next time with the cron and zone, clears it while disabled, and keeps it for a new version", async () => {
    const plan = await createPlan();
    const { body: created } = await createSchedule(plan, { cron: "0 2 * * *", version: "latest" });

    const versionOnly = await patchSchedule(created.id, { version: "latest:branch=release/2.x" });
    expect(versionOnly.status).toBe(200);
    expect(versionOnly.body).toMatchObject({
      version: "latest:branch=release/2.x",
      next_run_at: "2026-01-01T02:00:00.000Z",
    });

    const moved = await patchSchedule(created.id, { cron: "0 6 * * *", timezone: "America/New_York" });
    // 06:00 EST (-05:00) on 2026-01-01.
    expect(moved.body).toMatchObject({ cron: "0 6 * * *", next_run_at: "2026-01-01T11:00:00.000Z" });

    const disabled = await patchSchedule(created.id, { enabled: false });
    expect(disabled.body).toMatchObject({ enabled: false, next_run_at: null });
    const enabled = await patchSchedule(created.id, { enabled: true });
    expect(enabled.body).toMatchObject({ enabled: true, next_run_at: "2026-01-01T11:00:00.000Z" });

    const wrongZone = await patchSchedule(created.id, { timezone: "Nowhere/City" });
    expect(wrongZone.status).toBe(400);
    expect(wrongZone.body.errors).toEqual([expect.objectContaining({ path: "/timezone" })]);
    expect(await scheduleOf(plan, created.id)).toMatchObject({ timezone: "America/New_York" });

    expect((await patchSchedule(created.id, {})).status).toBe(400);
  });

  it("treats another organization's schedule as unknown: 404 schedule_not_found with a fix", async () => {
    const plan = await createPlan();
    const { body: created } = await createSchedule(plan, { cron: "0 2 * * *", version: "latest" });
    for (const response of [
      await patchSchedule(created.id, { enabled: false }, globex),
      await deleteSchedule(created.id, globex),
    ]) {
      expect(response.status).toBe(404);
      expect(response.body.code).toBe("schedule_not_found");
      expect(response.body.fix).toMatch(/schedules list/);
    }
    expect(await scheduleOf(plan, created.id)).toMatchObject({ enabled: true });

    expect((await deleteSchedule(created.id)).status).toBe(204);
    expect(await scheduleOf(plan, created.id)).toBeUndefined();
    expect((await patchSchedule(created.id, { enabled: true })).status).toBe(404);
    expect((await deleteSchedule(created.id)).status).toBe(404);
  });
});

describe("a due time", () => {
  /**
   * Moves the clock to the next time of these schedules (they share it) and waits until each has fired for it:
   * its last_result is for that time.
   */
  async function fireNext(planId: string, ids: string[]): Promise<ScheduleBody[]> {
    const due = (await scheduleOf(planId, ids[0] as string))?.next_run_at as string;
    server.clock.advance(Date.parse(due) - server.clock.now());
    const fired: ScheduleBody[] = [];
    for (const id of ids) {
      await expect.poll(async () => (await scheduleOf(planId, id))?.last_result?.scheduled_for).toBe(due);
      fired.push((await scheduleOf(planId, id)) as ScheduleBody);
    }
    return fired;
  }

  it("runs the plan on the right version, says ci.provider schedule, or skips it and says why", async () => {
    const plan = await createPlan();
    const latest = (await createSchedule(plan, { cron: "* * * * * *", version: "latest" })).body;
    const branch = (await createSchedule(plan, { cron: "* * * * * *", version: "latest:branch=release" }))
      .body;
    const named = (await createSchedule(plan, { cron: "* * * * * *", version: "9.9.9" })).body;

    // Nothing uploaded yet: each time is skipped, and says what to do.
    const [noVersion, noBranch, noNamed] = await fireNext(plan, [latest.id, branch.id, named.id]);
    for (const id of [latest.id, branch.id, named.id]) await patchSchedule(id, { enabled: false });
    expect(noVersion?.last_result).toMatchObject({
      outcome: "skipped",
      execution_id: null,
      detail: expect.stringMatching(/No version of com.example.basic has been uploaded/),
      fix: expect.stringMatching(/testbay upload --app com.example.basic/),
    });
    expect(noBranch?.last_result).toMatchObject({
      outcome: "skipped",
      detail: expect.stringMatching(/No execution of com.example.basic has ci.branch "release"/),
      fix: expect.stringMatching(/ci.branch/),
    });
    expect(noNamed?.last_result).toMatchObject({
      outcome: "skipped",
      detail: expect.stringMatching(/9\.9\.9/),
      fix: expect.stringMatching(/testbay upload/),
    });

    // 1.0.0 is what branch release last ran; 2.0.0 was uploaded after it, so it is the latest.
    await upload("1.0.0");
    const fromCi = await call(`${server.baseUrl}/testplan/run`, {
      headers: acme,
      json: {
        test_plan_id: plan,
        package_name: "com.example.basic",
        version: "1.0.0",
        ci: { provider: "github", branch: "release" },
      },
    });
    expect(fromCi.status).toBe(200);
    server.clock.advance(1000);
    await upload("2.0.0");

    for (const id of [latest.id, branch.id]) await patchSchedule(id, { enabled: true });
    const [onLatest, onBranch] = await fireNext(plan, [latest.id, branch.id]);
    for (const id of [latest.id, branch.id]) await patchSchedule(id, { enabled: false });
    expect(onLatest?.last_result).toMatchObject({ outcome: "triggered", version: "2.0.0", fix: null });
    expect(onBranch?.last_result).toMatchObject({ outcome: "triggered", version: "1.0.0" });

    const ran = await call(`${server.baseUrl}/executions/${onLatest?.last_result?.execution_id}`, {
      headers: acme,
    });
    expect(ran.body).toMatchObject({
      test_plan_id: plan,
      version: "2.0.0",
      status: "queued",
      ci: { provider: "schedule" },
      triggered_by: { type: "client", id: acmeClientId },
    });
    const ranBranch = await call(`${server.baseUrl}/executions/${onBranch?.last_result?.execution_id}`, {
      headers: acme,
    });
    expect(ranBranch.body).toMatchObject({
      version: "1.0.0",
      ci: { provider: "schedule", branch: "release" },
    });

    // The plan's runs: the one from CI and one per schedule for the time that ran, no more.
    const runs = await call(`${server.baseUrl}/executions?test_plan_id=${plan}`, { headers: acme });
    expect(runs.body.items.map((item: { ci: { provider: string } }) => item.ci.provider).sort()).toEqual([
      "github",
      "schedule",
      "schedule",
    ]);
  });

  it("moves the next time on past the time it fired, and a disabled schedule does not fire", async () => {
    await upload("1.0.0");
    const plan = await createPlan();
    const every = (await createSchedule(plan, { cron: "*/5 * * * * *", version: "1.0.0" })).body;
    const off = (await createSchedule(plan, { cron: "* * * * * *", version: "1.0.0" })).body;
    await patchSchedule(off.id, { enabled: false });

    const [fired] = await fireNext(plan, [every.id]);
    await patchSchedule(every.id, { enabled: false });
    expect(fired?.last_result).toMatchObject({ outcome: "triggered", version: "1.0.0" });
    expect(Date.parse(fired?.next_run_at ?? "") - Date.parse(fired?.last_result?.scheduled_for ?? "")).toBe(
      5000,
    );

    expect(await scheduleOf(plan, off.id)).toMatchObject({ next_run_at: null, last_result: null });
    const runs = await call(`${server.baseUrl}/executions?test_plan_id=${plan}`, { headers: acme });
    expect(runs.body.items).toHaveLength(1);
  });

  it("fires the times missed while nobody looked once, and counts the next time from then", async () => {
    await upload("1.0.0");
    const plan = await createPlan();
    const schedule = (await createSchedule(plan, { cron: "* * * * * *", version: "1.0.0" })).body;
    // Ten seconds pass at once, as for servers that were all stopped: one run, not ten.
    server.clock.advance(10_000);
    await expect
      .poll(async () => (await scheduleOf(plan, schedule.id))?.last_result?.outcome)
      .toBe("triggered");
    const fired = (await scheduleOf(plan, schedule.id)) as ScheduleBody;
    await patchSchedule(schedule.id, { enabled: false });
    expect(fired.last_result?.scheduled_for).toBe(schedule.next_run_at);
    expect(fired.next_run_at).toBe(new Date(server.clock.now() + 1000).toISOString());
    const runs = await call(`${server.baseUrl}/executions?test_plan_id=${plan}`, { headers: acme });
    expect(runs.body.items).toHaveLength(1);
  });

  it("skips the time of an archived plan and says how to restore it", async () => {
    await upload("1.0.0");
    const plan = await createPlan();
    const schedule = (await createSchedule(plan, { cron: "* * * * * *", version: "1.0.0" })).body;
    await call(`${server.baseUrl}/testplans/${plan}/archive`, { method: "POST", headers: acme });
    const [skipped] = await fireNext(plan, [schedule.id]);
    await patchSchedule(schedule.id, { enabled: false });
    expect(skipped?.last_result).toMatchObject({
      outcome: "skipped",
      detail: expect.stringMatching(/archived/),
      fix: expect.stringMatching(/restore/),
    });
  });
});

describe("the audit log", () => {
  it("says who created, changed and deleted a schedule, with what it runs", async () => {
    const admin = { "x-api-key": await server.token(await server.createClient("acme", "admin")) };
    const plan = await createPlan();
    const created = (await createSchedule(plan, { cron: "0 2 * * *", version: "latest" })).body;
    await patchSchedule(created.id, { enabled: false, timezone: "Europe/Berlin" });
    expect((await deleteSchedule(created.id)).status).toBe(204);
    // A refused change (another organization's schedule) is not in the log.
    expect((await patchSchedule(created.id, { enabled: true }, globex)).status).toBe(404);

    const audit = await call(`${server.baseUrl}/audit?limit=200`, { headers: admin });
    expect(audit.status).toBe(200);
    // Made in the same millisecond of the test's clock: compared by action, not by order.
    const entries = (audit.body.items as Array<{ action: string; target: { id: string } }>)
      .filter((entry) => entry.target.id === created.id)
      .sort((a, b) => a.action.localeCompare(b.action));
    const actor = { type: "client", id: acmeClientId };
    const runs = { test_plan_id: plan, cron: "0 2 * * *", version: "latest" };
    expect(entries).toEqual([
      expect.objectContaining({
        action: "schedule.created",
        actor,
        target: { type: "schedule", id: created.id },
        details: { ...runs, timezone: "UTC", enabled: true },
      }),
      expect.objectContaining({
        action: "schedule.deleted",
        actor,
        details: { ...runs, timezone: "Europe/Berlin", enabled: false },
      }),
      expect.objectContaining({
        action: "schedule.updated",
        actor,
        details: { ...runs, timezone: "Europe/Berlin", enabled: false, changed: ["enabled", "timezone"] },
      }),
    ]);
  });
});
