import type { BatchTriggerResult, ExecutionPriority } from "../sdk/models.ts";
import { ciMetadata } from "./ci.ts";
import { UsageError } from "./exit-codes.ts";
import { failedExecutionsText } from "./output.ts";
import type { Session } from "./session.ts";

/** The --plan option's help (trigger and run). */
export const planHelp =
  "test plan ID (tp_…), or the name of one of the app's active plans (repeat, or separate with commas)";

/** The batch trigger: one call for all plans; failures to start are reported plan by plan (rule 6). */
export async function triggerPlans(
  session: Session,
  options: { app: string; version: string; plan: string[]; priority?: ExecutionPriority },
): Promise<BatchTriggerResult> {
  if (options.plan.length === 0) throw new UsageError("Name at least one test plan with --plan ID.");
  if (new Set(options.plan).size !== options.plan.length) {
    throw new UsageError("A test plan is named twice with --plan: name each plan once.");
  }
  if (options.plan.length > 100) {
    throw new UsageError("At most 100 test plans per trigger: split them over several commands.");
  }
  // When no plan starts, the error carries failed_executions: main's errorText reports them, each plan once.
  const ci = ciMetadata(session.io.env);
  const result = await session.testbay().triggers.runBatch({
    package_name: options.app,
    version: options.version,
    test_plan_ids: options.plan,
    ...(ci ? { ci } : {}),
    ...(options.priority ? { priority: options.priority } : {}),
  });
  session.say(
    `Triggered ${result.executions.length} of ${options.plan.length} test plan${options.plan.length === 1 ? "" : "s"} on ${options.app} ${options.version}${result.replayed ? " (replayed)" : ""}.`,
  );
  if (result.failed_executions.length > 0) {
    session.say(failedExecutionsText(result.failed_executions, options.plan.length, session.context));
  }
  return result;
}
