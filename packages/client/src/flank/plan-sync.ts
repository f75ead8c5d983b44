import type { Session } from "../cli/session.ts";
import { changedFields } from "../plans/canonical.ts";
import type { PlanEntry } from "../plans/plans-file.ts";
import type { CreateTestPlan, PatchTestPlan, TestPlan } from "../sdk/models.ts";
import type { FlankPlan } from "./flank-plan.ts";

export type PlanSync = { plan: TestPlan; action: "created" | "updated" | "restored" | "unchanged" };

/**
 * The flank file's plan on the server, by name (`flank:<path>` or --plan-name): created the first time, updated
 * when the file changed, restored when it was archived, as `testbay plans apply` does for a testbay.yaml.
 */
export async function syncPlan(session: Session, packageName: string, wanted: FlankPlan): Promise<PlanSync> {
  const testbay = session.testbay();
  const entry: PlanEntry = wanted;
  const named: TestPlan[] = [];
  for await (const plan of testbay.testPlans.all({ package_name: packageName, limit: 200 })) {
    if (plan.name === wanted.name && plan.state !== "deleted") named.push(plan);
  }
  const current =
    named.find((plan) => plan.state === "active") ?? named.find((plan) => plan.state === "archived");
  if (!current) {
    const body: CreateTestPlan = { ...entry, package_name: packageName };
    return { plan: await testbay.testPlans.create(body), action: "created" };
  }
  let plan = current;
  let action: PlanSync["action"] = "unchanged";
  if (current.state === "archived") {
    plan = await testbay.testPlans.restore(current.id);
    action = "restored";
  }
  const changed = changedFields(entry, plan);
  if (changed.length > 0) {
    const patch = Object.fromEntries(changed.map((field) => [field, entry[field]])) as PatchTestPlan;
    plan = await testbay.testPlans.patch(plan.id, patch);
    if (action === "unchanged") action = "updated";
  }
  return { plan, action };
}
