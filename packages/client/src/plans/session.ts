import type { ExitCode } from "../cli/exit-codes.ts";
import type { FixContext } from "../cli/output.ts";
import type { Testbay } from "../sdk/client.ts";

/** What the plans commands need of the CLI's session (cli/session.ts's Session has it all). */
export interface PlansSession {
  testbay(): Testbay;
  /** A line for people, on stderr. */
  say(text: string): void;
  readonly json: boolean;
  resolvePath(file: string): string;
  /** What the command is about, so that the fix texts of errors name the real app. */
  context: FixContext;
}

/** How a plans command ends: its exit code, and for --json the document to print. */
export interface PlansOutcome {
  code: ExitCode;
  json?: unknown;
}

/** Every active and archived plan of the app (deleted ones are not listed: they cannot be matched). */
export async function appPlans(session: PlansSession, app: string, state?: "active") {
  const plans = [];
  for await (const plan of session
    .testbay()
    .testPlans.all({ package_name: app, limit: 200, ...(state ? { state } : {}) })) {
    plans.push(plan);
  }
  return plans;
}
