import { UsageError } from "../cli/exit-codes.ts";
import { unknownAppMessage } from "../cli/unknown-app.ts";
import type { Testbay } from "../sdk/client.ts";
import type { TestPlan } from "../sdk/models.ts";

/** What the server's IDs look like (packages/server/src/ids.ts): `tp_` and Crockford base32. */
const planId = /^tp_[0-9A-Za-z]+$/;

export const isPlanId = (value: string): boolean => planId.test(value);

async function plansOf(testbay: Testbay, query: { package_name?: string; state?: TestPlan["state"] }) {
  const found: TestPlan[] = [];
  for await (const plan of testbay.testPlans.all({ ...query, limit: 200 })) found.push(plan);
  return found;
}

/**
 * Why `--plan NAME` matched no active plan, in the words of the failure (CLIENT.md rule 14): the app is
 * unknown (with the closest registered name), the plan of that name is archived (with the command that
 * restores it), or there is no plan of that name (with the names there are).
 */
async function noActivePlan(
  testbay: Testbay,
  app: string,
  name: string,
  active: TestPlan[],
): Promise<UsageError> {
  if (active.length === 0) {
    const unknown = await unknownAppMessage(testbay, app);
    if (unknown) return new UsageError(`--app ${app}: ${unknown}.`);
  }
  const archived = (await plansOf(testbay, { package_name: app, state: "archived" })).filter(
    (p) => p.name === name,
  );
  const [plan] = archived;
  if (plan) {
    return new UsageError(
      `--plan ${name}: the test plan ${name} (${plan.id}) of ${app} is archived. Restore it with testbay plans restore ${plan.id}, then run this again.`,
    );
  }
  const names = [...new Set(active.map((p) => p.name))].sort();
  const known = names.length ? `${app}'s active plans: ${names.join(", ")}` : `${app} has no active plans`;
  return new UsageError(`--plan ${name}: no active test plan of that name (${known}).`);
}

/**
 * `--plan smoke` as well as `--plan tp_…`: names are looked up among the app's active plans, in one list
 * call made only when a name is given. A name that matches no plan, or two, is a usage error that says why
 * (noActivePlan), so the pipeline's author sees the typo or the archived plan at once.
 */
export async function resolvePlanIds(testbay: Testbay, app: string, plans: string[]): Promise<string[]> {
  if (plans.every(isPlanId)) return plans;
  const active = await plansOf(testbay, { package_name: app, state: "active" });
  const ids: string[] = [];
  for (const value of plans) {
    if (isPlanId(value)) {
      ids.push(value);
      continue;
    }
    const matches = active.filter((p) => p.name === value);
    const [match] = matches;
    if (!match) throw await noActivePlan(testbay, app, value, active);
    if (matches.length > 1) {
      throw new UsageError(
        `--plan ${value}: ${matches.length} active plans have that name (${matches.map((p) => p.id).join(", ")}); name one by its ID.`,
      );
    }
    ids.push(match.id);
  }
  return ids;
}

/**
 * The plan `plans archive|restore PLAN` means: an ID as it is, or a name, looked up among the plans in `from`
 * (active ones to archive; archived or deleted ones to restore) of `--app`, or of every app when none is given.
 */
export async function findPlanToChange(
  testbay: Testbay,
  value: string,
  options: { app?: string | undefined; from: Array<TestPlan["state"]> },
): Promise<string> {
  if (isPlanId(value)) return value;
  const app = options.app;
  const named = (await plansOf(testbay, app ? { package_name: app } : {})).filter((p) => p.name === value);
  const candidates = named
    .filter((p) => options.from.includes(p.state))
    .sort((a, b) => a.package_name.localeCompare(b.package_name));
  const where = app ? ` of ${app}` : "";
  const [plan] = candidates;
  if (plan && candidates.length === 1) return plan.id;
  if (candidates.length > 1) {
    const listed = candidates.map((p) => `${p.package_name} (${p.id})`).join(", ");
    throw new UsageError(
      `${candidates.length} test plans are named ${value}${where}: ${listed}; name the app with --app PACKAGE, or the plan by its ID.`,
    );
  }
  const other = named[0];
  if (other) {
    throw new UsageError(
      `the test plan ${value} (${other.id}) of ${other.package_name} is ${other.state} already: nothing to do.`,
    );
  }
  if (app) {
    const unknown = await unknownAppMessage(testbay, app);
    if (unknown) throw new UsageError(`--app ${app}: ${unknown}.`);
  }
  throw new UsageError(
    `no test plan is named ${value}${where}: testbay plans list${app ? ` --app ${app}` : ""} shows their names and IDs.`,
  );
}
