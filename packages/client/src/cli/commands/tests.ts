import type { Command } from "commander";
import { ExitCode } from "../exit-codes.ts";
import type { Session } from "../session.ts";

/** `testbay tests quarantine|release`: a known-flaky test's failures stop failing runs while it is fixed. */
export function addTestsCommands(program: Command, session: Session): void {
  const tests = program
    .command("tests")
    .description("Tests of a plan: quarantine a known-flaky test while it is fixed, and release it");
  tests
    .command("quarantine")
    .description(
      "Quarantine a test: it keeps running and being reported, but its failures stop failing runs (again: a new reason)",
    )
    .argument("<test_id>", "test ID (t_…, as the run's page and GET /v1/tests show it)")
    .requiredOption("--reason <text>", "why, in up to 500 characters (a ticket, what is being fixed)")
    .action(async (testId: string, options: { reason: string }) => {
      const quarantine = await session.testbay().tests.quarantine(testId, options.reason);
      session.say(
        `Quarantined ${quarantine.classname}#${quarantine.name} (${testId}) of plan ${quarantine.test_plan_id}: its failures no longer fail runs. Release it with testbay tests release ${testId}`,
      );
      session.setOutcome({ code: ExitCode.ok, json: { quarantine } });
    });
  tests
    .command("release")
    .description(
      "Release a test from quarantine: its failures fail runs again (done also if it was not quarantined)",
    )
    .argument("<test_id>", "test ID (t_…)")
    .action(async (testId: string) => {
      await session.testbay().tests.release(testId);
      session.say(`${testId} is not quarantined: its failures fail runs.`);
      session.setOutcome({ code: ExitCode.ok, json: { test_id: testId, quarantined: false } });
    });
}
