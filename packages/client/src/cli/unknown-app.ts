import type { Testbay } from "../sdk/client.ts";
import { TestbayApiError } from "../sdk/errors.ts";
import { closestName } from "./closest-name.ts";

/**
 * When `app` is not registered: the words that say so (CLIENT.md rule 14), with the closest registered package
 * name when one is near enough to be a typo; undefined when the app exists. Costs a call or two, so it is asked
 * only once something already went wrong (an empty plan list, a 404 app_not_found).
 */
export async function unknownAppMessage(testbay: Testbay, app: string): Promise<string | undefined> {
  try {
    await testbay.apps.get(app);
    return undefined;
  } catch (error) {
    if (!(error instanceof TestbayApiError && error.code === "app_not_found")) return undefined;
  }
  const names: string[] = [];
  try {
    for await (const registered of testbay.apps.all({ limit: 200 })) names.push(registered.package_name);
  } catch {
    // Still unknown, only without a suggestion.
  }
  const near = closestName(app, names);
  if (near) return `unknown app ${app}; did you mean ${near}? (package names are exact and case-sensitive)`;
  return names.length
    ? `unknown app ${app}: testbay apps list shows the registered ones, or register it with testbay apps create --app ${app} --platform android (or ios)`
    : `unknown app ${app}: no app is registered yet; register it with testbay apps create --app ${app} --platform android (or ios)`;
}
