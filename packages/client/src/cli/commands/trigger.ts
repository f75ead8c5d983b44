import type { Command } from "commander";
import { resolvePlanIds } from "../../plans/by-name.ts";
import { collect } from "../comma-list.ts";
import { ExitCode } from "../exit-codes.ts";
import { executionTable } from "../output.ts";
import type { Session } from "../session.ts";
import { planHelp, triggerPlans } from "../trigger-plans.ts";

/** `testbay trigger`: test plans on a registered version, in one batch call. */
export function addTriggerCommand(program: Command, session: Session): void {
  program
    .command("trigger")
    .description("Trigger test plans on a registered version: one batch call for all plans")
    .requiredOption("--app <package>", "package name (exact, case-sensitive)")
    .requiredOption("--version <version>", "version identifier")
    .option("--plan <id-or-name>", planHelp, collect, [] as string[])
    .action(async (options: { app: string; version: string; plan: string[] }) => {
      options.plan = await resolvePlanIds(session.testbay(), options.app, options.plan);
      const result = await triggerPlans(session, options);
      if (!session.json) session.print(executionTable(result.executions));
      session.setOutcome({
        code: result.failed_executions.length ? ExitCode.plansFailedToStart : ExitCode.ok,
        json: result,
      });
    });
}
