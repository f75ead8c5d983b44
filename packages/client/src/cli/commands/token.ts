import type { Command } from "commander";
import { ExitCode } from "../exit-codes.ts";
import type { Session } from "../session.ts";

/** `testbay token`: an access token for the rest of a pipeline. */
export function addTokenCommand(program: Command, session: Session): void {
  program
    .command("token")
    .description(
      "Print an access token, for `export TESTBAY_TOKEN=$(testbay token)` at the start of a pipeline",
    )
    .action(async () => {
      const testbay = session.testbay();
      const token = await testbay.accessToken();
      const known = testbay.tokens.peek();
      if (testbay.tokens.fixed) session.say("note: TESTBAY_TOKEN is set; printing it (no token call made).");
      if (session.json) {
        const expires =
          known && Number.isFinite(known.expiresAt) ? new Date(known.expiresAt).toISOString() : null;
        session.setOutcome({ code: ExitCode.ok, json: { access_token: token, expires_at: expires } });
      } else {
        session.print(`${token}\n`);
        session.setOutcome({ code: ExitCode.ok });
      }
    });
}
