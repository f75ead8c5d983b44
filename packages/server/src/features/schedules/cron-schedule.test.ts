import { describe, expect, it } from "vitest";
import { ApiError } from "../../errors.ts";
import { CronSchedule } from "./cron-schedule.ts";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

/** The next `count` times after `from`, as ISO UTC strings. */
function times(schedule: CronSchedule, from: string, count: number): Array<string | null> {
  const out: Array<string | null> = [];
  let cursor = at(from);
  for (let i = 0; i < count; i++) {
    const next = schedule.nextAfter(cursor);
    out.push(iso(next));
    if (next === null) break;
    cursor = next;
  }
  return out;
}

function problemOf(run: () => unknown): ApiError {
  try {
    run();
  } catch (error) {
    if (error instanceof ApiError) return error;
    throw error;
  }
  throw new Error("expected an ApiError");
}

describe("CronSchedule across daylight saving time", () => {
  // Europe/Berlin: on 2026-03-29 clocks go from 02:00 CET (+01:00) to 03:00 CEST (+02:00); on 2026-10-25 from
  // 03:00 CEST back to 02:00 CET.
  it("fires a nightly 09:00 at 09:00 local on both sides of the spring change", () => {
    const nine = CronSchedule.parse("0 9 * * *", "Europe/Berlin", at("2026-03-27T00:00:00Z"));
    expect(times(nine, "2026-03-27T00:00:00Z", 4)).toEqual([
      "2026-03-27T08:00:00.000Z", // 09:00 CET
      "2026-03-28T08:00:00.000Z", // 09:00 CET
      "2026-03-29T07:00:00.000Z", // 09:00 CEST: an hour earlier in UTC, the same on the wall clock
      "2026-03-30T07:00:00.000Z",
    ]);
  });

  it("fires a time the spring change skips once, at the first valid time after the gap", () => {
    // 02:30 does not exist in Berlin on 2026-03-29: it runs at 03:00 CEST that day, not never and not twice.
    const skipped = CronSchedule.parse("30 2 * * *", "Europe/Berlin", at("2026-03-28T00:00:00Z"));
    expect(times(skipped, "2026-03-28T00:00:00Z", 3)).toEqual([
      "2026-03-28T01:30:00.000Z", // 02:30 CET
      "2026-03-29T01:00:00.000Z", // 03:00 CEST, the first time after the gap
      "2026-03-30T00:30:00.000Z", // 02:30 CEST
    ]);
  });

  it("fires a time the autumn change repeats once, at its first occurrence", () => {
    const repeated = CronSchedule.parse("30 2 * * *", "Europe/Berlin", at("2026-10-24T00:00:00Z"));
    expect(times(repeated, "2026-10-24T00:00:00Z", 3)).toEqual([
      "2026-10-24T00:30:00.000Z", // 02:30 CEST
      "2026-10-25T00:30:00.000Z", // the first 02:30 (CEST); the second, 01:30Z, does not fire
      "2026-10-26T01:30:00.000Z", // 02:30 CET
    ]);
  });

  it("follows the zone's own rules: New York changes on another date than Berlin", () => {
    // 2026-03-08 02:00 EST → 03:00 EDT in New York.
    const eight = CronSchedule.parse("0 8 * * 1-5", "America/New_York", at("2026-03-05T00:00:00Z"));
    expect(times(eight, "2026-03-05T00:00:00Z", 3)).toEqual([
      "2026-03-05T13:00:00.000Z", // Thursday 08:00 EST
      "2026-03-06T13:00:00.000Z", // Friday 08:00 EST
      "2026-03-09T12:00:00.000Z", // Monday 08:00 EDT
    ]);
  });
});

describe("CronSchedule.parse", () => {
  it("reads six fields as seconds first, and UTC when the zone is UTC", () => {
    const everySecond = CronSchedule.parse("* * * * * *", "UTC", at("2026-01-01T00:00:00Z"));
    expect(times(everySecond, "2026-01-01T00:00:00Z", 2)).toEqual([
      "2026-01-01T00:00:01.000Z",
      "2026-01-01T00:00:02.000Z",
    ]);
    const nightly = CronSchedule.parse("0 2 * * *", "UTC", at("2026-01-01T00:00:00Z"));
    expect(times(nightly, "2026-01-01T02:00:00Z", 1)).toEqual(["2026-01-02T02:00:00.000Z"]);
  });

  it("keeps the zone as Intl names it", () => {
    expect(CronSchedule.parse("0 2 * * *", "utc", Date.now()).timezone).toBe("UTC");
    expect(CronSchedule.parse("0 2 * * *", "Europe/Berlin", Date.now()).timezone).toBe("Europe/Berlin");
  });

  it.each([
    ["* * * *", /exactly five, six, or seven/],
    ["* * * * * * *", /5 or 6 parts/],
    ["61 * * * *", /minute: 61/],
    ["every day", /./],
  ])("refuses %j with a 400 on /cron and a fix", (cron, says) => {
    const problem = problemOf(() => CronSchedule.parse(cron, "UTC", Date.now()));
    expect(problem.status).toBe(400);
    expect(problem.code).toBe("invalid_request");
    expect(problem.extra.errors).toEqual([
      { path: "/cron", in: "body", message: expect.stringMatching(says) },
    ]);
    expect(problem.fix).toMatch(/five fields/);
  });

  it("refuses a pattern that names no day that exists", () => {
    const problem = problemOf(() => CronSchedule.parse("0 0 30 2 *", "UTC", Date.now()));
    expect(problem.detail).toMatch(/February 30th/);
    expect(problem.extra.errors).toEqual([expect.objectContaining({ path: "/cron" })]);
  });

  it.each(["Mars/Olympus", "CEST", ""])(
    "refuses the time zone %j with a 400 on /timezone and a fix",
    (zone) => {
      const problem = problemOf(() => CronSchedule.parse("0 2 * * *", zone, Date.now()));
      expect(problem.status).toBe(400);
      expect(problem.extra.errors).toEqual([expect.objectContaining({ path: "/timezone" })]);
      expect(problem.fix).toMatch(/IANA time zone/);
    },
  );
});
