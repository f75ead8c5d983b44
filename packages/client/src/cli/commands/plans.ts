import type { Command } from "commander";
import { findPlanToChange } from "../../plans/by-name.ts";
import { ExitCode } from "../exit-codes.ts";
import { planTable } from "../output.ts";
import type { Session } from "../session.ts";

/** `testbay plans list|archive|restore|apply|export`: test plans, and plans as code (testbay.yaml). */
export function addPlansCommands(program: Command, session: Session): void {
  const plans = program.command("plans").description("Test plans");
  plans
    .command("list")
    .description("List test plans (active and archived)")
    .option("--app <package>", "only this app's plans")
    .action(async (options: { app?: string }) => {
      const testbay = session.testbay();
      const items = [];
      for await (const plan of testbay.testPlans.all({
        ...(options.app ? { package_name: options.app } : {}),
        limit: 200,
      })) {
        items.push(plan);
      }
      if (!session.json) session.print(items.length ? planTable(items) : "No test plans.\n");
      session.setOutcome({ code: ExitCode.ok, json: { items } });
    });

  plans
    .command("archive")
    .description("Archive a test plan: it is not triggered any more, and plans restore brings it back")
    .argument("<plan>", "test plan ID (tp_…) or name")
    .option("--app <package>", "the plan's app, when plans of several apps have that name")
    .action(async (value: string, options: { app?: string }) => {
      const testbay = session.testbay();
      const id = await findPlanToChange(testbay, value, { app: options.app, from: ["active"] });
      const plan = await testbay.testPlans.archive(id);
      session.say(
        `Archived test plan ${plan.name} (${plan.id}) of ${plan.package_name}: it is not triggered any more. Restore it with testbay plans restore ${plan.id}`,
      );
      if (!session.json) session.print(planTable([plan]));
      session.setOutcome({ code: ExitCode.ok, json: plan });
    });
  plans
    .command("restore")
    .description("Restore an archived test plan (or one deleted within 30 days): it can be triggered again")
    .argument("<plan>", "test plan ID (tp_…) or name")
    .option("--app <package>", "the plan's app, when plans of several apps have that name")
    .action(async (value: string, options: { app?: string }) => {
      const testbay = session.testbay();
      const id = await findPlanToChange(testbay, value, { app: options.app, from: ["archived", "deleted"] });
      const plan = await testbay.testPlans.restore(id);
      session.say(
        `Restored test plan ${plan.name} (${plan.id}) of ${plan.package_name}: it can be triggered again.`,
      );
      if (!session.json) session.print(planTable([plan]));
      session.setOutcome({ code: ExitCode.ok, json: plan });
    });

  // The plans-as-code commands load their YAML parser and schema validator only when they run (cold start).
  plans
    .command("apply")
    .description(
      "Create or update the app's test plans from testbay.yaml, matched by name; plans the file does not name are left alone unless --prune",
    )
    .requiredOption("-f, --file <path>", "the plans file, e.g. testbay.yaml")
    .option("--prune", "archive the app's active plans that the file does not name (restorable)")
    .option("--dry-run", "print what would change, and change nothing")
    .action(async (options: { file: string; prune?: boolean; dryRun?: boolean }) => {
      const { applyPlans } = await import("../../plans/apply.ts");
      session.setOutcome(await applyPlans(session, options));
    });
  plans
    .command("export")
    .description("Print the app's active test plans as testbay.yaml, or write them to a file")
    .requiredOption("--app <package>", "package name (exact, case-sensitive)")
    .option("-f, --file <path>", "write the file here instead of stdout")
    .option("--force", "with --file: overwrite an existing file")
    .action(async (options: { app: string; file?: string; force?: boolean }) => {
      const { exportPlans } = await import("../../plans/export.ts");
      const { text, ...outcome } = await exportPlans(session, options);
      if (text !== undefined && !session.json) session.print(text);
      session.setOutcome(outcome);
    });
}
