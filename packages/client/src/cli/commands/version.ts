import type { Command } from "commander";
import { ExitCode } from "../exit-codes.ts";
import type { Session } from "../session.ts";
import { cliVersion } from "../version.ts";

/** `testbay version`: the CLI's version (main.ts answers a lone `--version` before building any command). */
export function addVersionCommand(program: Command, session: Session): void {
  program
    .command("version")
    .description("Print the CLI's version (also testbay --version)")
    .action(() => {
      session.print(`${cliVersion()}\n`);
      session.setOutcome({ code: ExitCode.ok, json: { version: cliVersion() } });
    });
}
