import { UsageError } from "../cli/exit-codes.ts";
import type { Testbay } from "../sdk/client.ts";
import type { TestPlan } from "../sdk/models.ts";

/** What the server's IDs look like (packages/server/src/ids.ts): `tp_` and Crockford base32. */
const planId = /^tp_[0-9A-Za-z]+$/;

export const isPlanId = (value: string): boolean => planId.test(value);

/**
 * `--plan smoke` as well as `--plan tp_…`: names are looked up among the app's active plans, in one list
 * call made only when a name is given. A name that matches no plan, or two, is a usage error that lists the
 * names there are, so the pipeline's author sees the typo at once.
 */
export async function resolvePlanIds(testbay: Testbay, app: string, plans: string[]): Promise<string[]> {
  if (plans.every(isPlanId)) return plans;
  const active: TestPlan[] = [];
  for await (const plan of testbay.testPlans.all({ package_name: app, state: "active", limit: 200 })) {
    active.push(plan);
  }
  const names = [...new Set(active.map((p) => p.name))].sort();
  const known = names.length ? `${app}'s active plans: ${names.join(", ")}` : `${app} has no active plans`;
  return plans.map((value) => {
    if (isPlanId(value)) return value;
    const matches = active.filter((p) => p.name === value);
    const [match] = matches;
    if (!match) throw new UsageError(`--plan ${value}: no active test plan of that name (${known}).`);
    if (matches.length > 1) {
      throw new UsageError(
        `--plan ${value}: ${matches.length} active plans have that name (${matches.map((p) => p.id).join(", ")}); name one by its ID.`,
      );
    }
    return match.id;
  });
}
