import { stringify } from "yaml";
import type { FlankPlan } from "./flank-plan.ts";

/**
 * The converted plan as a testbay.yaml (`testbay flank convert --yaml`), to keep as code and apply with
 * `testbay plans apply`. `app` is the APK's package when it could be read; otherwise a placeholder said so.
 */
export function planYaml(plan: FlankPlan, packageName: string | undefined): string {
  const header = packageName
    ? ""
    : "# The app's package could not be read from gcloud.app: replace PACKAGE_NAME with it.\n";
  return `${header}${stringify({ app: packageName ?? "PACKAGE_NAME", plans: [plan] }, { lineWidth: 0 })}`;
}
