import type { Command } from "commander";
import { findPlanToChange } from "../../plans/by-name.ts";
import { type Schedule, schedulesApi } from "../../sdk/schedules.ts";
import { ExitCode } from "../exit-codes.ts";
import { table } from "../output.ts";
import type { Session } from "../session.ts";

/** What became of a schedule's last time, in a table cell: the run it queued, or why it was skipped. */
export function lastResultText(schedule: Pick<Schedule, "last_result">): string {
  const last = schedule.last_result;
  if (!last) return "-";
  if (last.outcome === "triggered") return `${last.scheduled_for} ran ${last.version} (${last.execution_id})`;
  return `${last.scheduled_for} skipped: ${last.detail}`;
}

export function scheduleTable(schedules: Schedule[]): string {
  const rows = [["SCHEDULE", "CRON", "TIMEZONE", "VERSION", "NEXT RUN", "LAST"]];
  for (const s of schedules) {
    rows.push([
      s.id,
      s.cron,
      s.timezone,
      s.version,
      s.enabled ? (s.next_run_at ?? "-") : "disabled",
      lastResultText(s),
    ]);
  }
  return table(rows);
}

/** `testbay schedules create|list|delete`: runs of a test plan at the times of a cron expression (API.md §15). */
export function addSchedulesCommands(program: Command, session: Session): void {
  const schedules = program
    .command("schedules")
    .description("Scheduled runs: a test plan triggered at the times of a cron expression (the nightly run)");
  schedules
    .command("create")
    .description("Run a test plan at the times of a cron expression, in a time zone, on the version you name")
    .requiredOption("--plan <plan>", "test plan ID (tp_…) or name")
    .option("--app <package>", "the plan's app, when plans of several apps have that name")
    .requiredOption(
      "--cron <expression>",
      'five fields (minute hour day-of-month month day-of-week: "0 2 * * *" is 02:00 daily) or six with seconds first',
    )
    .option("--timezone <zone>", "IANA time zone the times are in (Europe/Berlin)", "UTC")
    .option(
      "--version <version>",
      "latest (the most recently uploaded), latest:branch=NAME (what branch NAME last ran) or a version",
      "latest",
    )
    .action(
      async (options: { plan: string; app?: string; cron: string; timezone: string; version: string }) => {
        const testbay = session.testbay();
        const planId = await findPlanToChange(testbay, options.plan, { app: options.app, from: ["active"] });
        const created = await schedulesApi(testbay.transport).create(planId, {
          cron: options.cron,
          timezone: options.timezone,
          version: options.version,
        });
        session.say(
          `Scheduled test plan ${planId}: ${created.cron} (${created.timezone}) on ${created.version}; next run ${created.next_run_at}. Delete it with testbay schedules delete ${created.id}`,
        );
        if (!session.json) session.print(scheduleTable([created]));
        session.setOutcome({ code: ExitCode.ok, json: created });
      },
    );
  schedules
    .command("list")
    .description("List a test plan's schedules: the next time each runs, and what became of the last")
    .requiredOption("--plan <plan>", "test plan ID (tp_…) or name")
    .option("--app <package>", "the plan's app, when plans of several apps have that name")
    .action(async (options: { plan: string; app?: string }) => {
      const testbay = session.testbay();
      const planId = await findPlanToChange(testbay, options.plan, {
        app: options.app,
        from: ["active", "archived", "deleted"],
      });
      const items = await schedulesApi(testbay.transport).list(planId);
      if (!session.json) {
        session.print(
          items.length
            ? scheduleTable(items)
            : `No schedules: add one with testbay schedules create --plan ${planId} --cron "0 2 * * *"\n`,
        );
      }
      session.setOutcome({ code: ExitCode.ok, json: { items } });
    });
  schedules
    .command("delete")
    .description("Delete a schedule: no time of it runs from now on (runs it queued go on)")
    .argument("<schedule_id>", "schedule ID (sch_…, as testbay schedules list shows it)")
    .action(async (id: string) => {
      await schedulesApi(session.testbay().transport).delete(id);
      session.say(`Deleted schedule ${id}: no time of it runs from now on.`);
      session.setOutcome({ code: ExitCode.ok, json: { id, deleted: true } });
    });
}
