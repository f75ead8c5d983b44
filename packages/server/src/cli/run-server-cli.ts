import { CommanderError } from "commander";
import { StoreMissingError } from "../admin-store.ts";
import { BackupRefusedError } from "../backup/backup-errors.ts";
import { ConfigError } from "../config.ts";
import { AdminError } from "../features/clients/index.ts";
import { AmbiguousEmailError } from "../features/people/index.ts";
import type { CliIo } from "./cli-io.ts";
import { buildServerProgram } from "./program.ts";

/**
 * Runs `testbay-server ARGS…` (argv without node and the script) with the given surroundings and resolves with
 * the exit code, never exiting the process: the bin (cli.ts) exits with it, the suites assert it. Every failure
 * is said on stderr as `testbay-server: …`; exit 2 is for what retrying will not fix but a change of setting
 * or command will, 1 for the rest. `start`, once listening, leaves the server running and resolves with 0.
 */
export async function runServerCli(argv: string[], io: CliIo): Promise<number> {
  const err = (line: string) => io.stderr.write(`${line}\n`);
  try {
    await buildServerProgram(io).parseAsync(argv, { from: "user" });
    return 0;
  } catch (error) {
    // Commander has said what was wrong (or printed the version or help) already.
    if (error instanceof CommanderError) return error.exitCode;
    if (error instanceof ConfigError) {
      for (const problem of error.problems) err(`testbay-server: ${problem}`);
      return 2;
    }
    // Exit 2 as for a configuration error: retrying will not help, pointing it at the right store will.
    if (error instanceof StoreMissingError) {
      err(`testbay-server: ${error.message}`);
      return 2;
    }
    // Exit 2: the command was incomplete (which account?), and its message names the option to add.
    if (error instanceof AmbiguousEmailError) {
      err(`testbay-server: ${error.message}`);
      return 2;
    }
    // 2 or 3, as backup/backup-errors.ts says (docs/operating.md lists them).
    if (error instanceof BackupRefusedError) {
      err(`testbay-server: ${error.message}`);
      return error.exitCode;
    }
    if (error instanceof AdminError) {
      err(`testbay-server: ${error.message}`);
      return 1;
    }
    err(`testbay-server: ${error instanceof Error ? error.message : String(error)}`);
    return 1;
  }
}
