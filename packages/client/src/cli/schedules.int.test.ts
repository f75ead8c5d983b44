// `testbay schedules …` against a real server (API.md §15): a schedule made for a plan named as people name it,
// listed with its next run, run when its time comes (the server's clock moved), shown with what that time ran,
// and deleted; the server's refusals come with their fix (exit 4).
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { inProcessCli } from "../../test/in-process-cli.ts";

let server: TestServer;
let dir: string;
let ci: Awaited<ReturnType<TestServer["createClient"]>>;
let token: string;
let planId: string;

const cli = inProcessCli(() => ({ server, credentials: ci, cwd: dir, token }));

beforeAll(async () => {
  // Each instance looks for due times every 20 ms; the test moves the server's clock to make a time come.
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_SCHEDULES_TICK_MS: "20" },
  });
  dir = await mkdtemp(path.join(tmpdir(), "testbay-schedules-"));
  ci = await server.createClient("acme", "ci");
  token = await server.token(ci);
  await registerBasicApp(server, { "x-api-key": token });
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: { "x-api-key": token },
    json: {
      name: "nightly regression",
      package_name: "com.example.basic",
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    },
  });
  planId = plan.body.id;
});
afterAll(async () => {
  await server.close();
  await rm(dir, { recursive: true, force: true });
});

describe("testbay schedules", () => {
  it("creates a schedule for a plan named by its name, in a time zone, and lists it with its next run", async () => {
    // The server's clock starts at 2026-01-01T00:00:00Z: 02:00 in Berlin (CET) is 01:00 UTC.
    const created = await cli([
      "schedules",
      "create",
      "--plan",
      "nightly regression",
      "--cron",
      "0 2 * * *",
      "--timezone",
      "Europe/Berlin",
      "--version",
      "latest:branch=main",
      "--json",
    ]);
    expect(created.code, created.stderr).toBe(0);
    const schedule = JSON.parse(created.stdout);
    expect(schedule).toMatchObject({
      id: expect.stringMatching(/^sch_/),
      test_plan_id: planId,
      timezone: "Europe/Berlin",
      version: "latest:branch=main",
      next_run_at: "2026-01-01T01:00:00.000Z",
    });
    expect(created.stderr).toContain(`testbay schedules delete ${schedule.id}`);

    const listed = await cli(["schedules", "list", "--plan", planId]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toMatch(/SCHEDULE\s+CRON\s+TIMEZONE\s+VERSION\s+NEXT RUN\s+LAST/);
    expect(listed.stdout).toContain(
      `${schedule.id}  0 2 * * *  Europe/Berlin  latest:branch=main  2026-01-01T01:00:00.000Z  -`,
    );

    const deleted = await cli(["schedules", "delete", schedule.id]);
    expect(deleted.code, deleted.stderr).toBe(0);
    const empty = await cli(["schedules", "list", "--plan", planId]);
    expect(empty.stdout).toContain(`No schedules: add one with testbay schedules create --plan ${planId}`);
  });

  it("shows what a time ran once it came", async () => {
    const created = await cli(["schedules", "create", "--plan", planId, "--cron", "* * * * * *", "--json"]);
    expect(created.code, created.stderr).toBe(0);
    const schedule = JSON.parse(created.stdout);
    expect(schedule.version).toBe("latest");

    server.clock.advance(Date.parse(schedule.next_run_at) - server.clock.now());
    await expect
      .poll(async () => {
        const listed = await cli(["schedules", "list", "--plan", planId, "--json"]);
        return JSON.parse(listed.stdout).items[0]?.last_result?.outcome;
      })
      .toBe("triggered");
    expect((await cli(["schedules", "delete", schedule.id])).code).toBe(0);

    const shown = await cli(["schedules", "list", "--plan", planId, "--json"]);
    expect(JSON.parse(shown.stdout).items).toEqual([]);
    const runs = await call(`${server.baseUrl}/executions?test_plan_id=${planId}`, {
      headers: { "x-api-key": token },
    });
    expect(runs.body.items).toEqual([
      expect.objectContaining({ version: "1.2.3", ci: { provider: "schedule" } }),
    ]);
  });

  it("passes on the server's refusals with their fix (exit 4)", async () => {
    const badCron = await cli(["schedules", "create", "--plan", planId, "--cron", "0 25 * * *"]);
    expect(badCron.code).toBe(4);
    expect(badCron.stderr).toMatch(/hour: 25/);
    expect(badCron.stderr).toMatch(/five fields/);

    const badZone = await cli([
      "schedules",
      "create",
      "--plan",
      planId,
      "--cron",
      "0 2 * * *",
      "--timezone",
      "Central European Time",
    ]);
    expect(badZone.code).toBe(4);
    expect(badZone.stderr).toMatch(/IANA time zone/);

    const unknown = await cli(["schedules", "delete", "sch_00000000000000000000000000"]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/testbay schedules list --plan/);
  });
});
