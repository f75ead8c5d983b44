import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

// API.md §15: each time of a schedule is triggered once, whichever instance fires it, also while another instance
// is stopped. Two API instances on one database (PostgreSQL in the postgres project, one SQLite file in the sqlite
// one) and one clock that the test moves a second at a time; each instance looks for due times every 10 ms, so
// both look at every due time and race for it (SchedulesRepo.claim decides).

const rounds = 8;

let first: TestServer;
let second: TestServer;
let secondClosed = false;
let ci: Record<string, string>;

beforeAll(async () => {
  const env = {
    TESTBAY_SCHEDULES_TICK_MS: "10",
    TESTBAY_RATE_LIMIT_BURST: "100000",
  };
  first = await startTestServer({ env });
  second = await startTestServer({ env, shareWith: first, clock: first.clock });
  ci = { "x-api-key": await first.token(await first.createClient("acme", "ci")) };
  await registerBasicApp(first, ci);
});
afterAll(async () => {
  if (!secondClosed) await second.close();
  await first.close();
});

/** The schedule's fires this instance logged (schedule-firing.ts logs one line per time it claimed). */
function firesLogged(server: TestServer, scheduleId: string): string[] {
  const times: string[] = [];
  for (const line of server.logs.join("").split("\n")) {
    if (!line.includes(scheduleId)) continue;
    try {
      const entry = JSON.parse(line) as { msg?: string; schedule_id?: string; scheduled_for?: string };
      if (entry.msg === "scheduled run triggered" && entry.scheduled_for) times.push(entry.scheduled_for);
    } catch {
      // not a JSON log line
    }
  }
  return times;
}

async function scheduledRuns(planId: string): Promise<string[]> {
  const runs = await call(`${first.baseUrl}/executions?test_plan_id=${planId}&limit=200`, { headers: ci });
  expect(runs.status).toBe(200);
  return (runs.body.items as Array<{ created_at: string; ci: { provider?: string } | null }>)
    .filter((run) => run.ci?.provider === "schedule")
    .map((run) => run.created_at)
    .sort();
}

describe("a schedule on two instances", () => {
  it("triggers each second of a six-field cron once, and goes on when one instance stops", async () => {
    const plan = await call(`${first.baseUrl}/testplans`, {
      headers: ci,
      json: {
        name: "every second",
        package_name: "com.example.basic",
        steps: [{ type: "inspect", expect: { debuggable: false } }],
      },
    });
    const created = await call(`${second.baseUrl}/testplans/${plan.body.id}/schedules`, {
      headers: ci,
      json: { cron: "* * * * * *", version: "1.2.3" },
    });
    expect(created.status).toBe(201);
    const scheduleId: string = created.body.id;

    const dueTimes: string[] = [];
    /** Moves the shared clock to the next second and waits for the run of that second. */
    const fireNextSecond = async () => {
      first.clock.advance(1000);
      dueTimes.push(new Date(first.clock.now()).toISOString());
      await expect.poll(() => scheduledRuns(plan.body.id)).toHaveLength(dueTimes.length);
    };

    for (let round = 0; round < rounds; round++) await fireNextSecond();

    // Closing waits for the instance's look under way (ScheduleFiring.stop): whatever it fired is in by now.
    await second.close();
    secondClosed = true;
    for (let round = 0; round < 2; round++) await fireNextSecond();
    await call(`${first.baseUrl}/schedules/${scheduleId}`, {
      method: "PATCH",
      headers: ci,
      json: { enabled: false },
    });

    // The remaining instance looks one round at a time, so its fires are in too: one run per second, each made
    // at the second it was for (the clock stood there until the run was seen), none twice.
    expect(await scheduledRuns(plan.body.id)).toEqual(dueTimes);
    const fired = [...firesLogged(first, scheduleId), ...firesLogged(second, scheduleId)].sort();
    expect(fired).toEqual(dueTimes);
    expect(firesLogged(first, scheduleId)).toEqual(expect.arrayContaining(dueTimes.slice(rounds)));
  });
});
