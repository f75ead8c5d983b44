import { Command, CommanderError } from "commander";
import { TestbayApiError } from "../sdk/errors.ts";
import { addAgentsCommand } from "./commands/agents.ts";
import { addAppsCommands } from "./commands/apps.ts";
import { addExecutionCommands } from "./commands/executions.ts";
import { addFlankCommands } from "./commands/flank.ts";
import { addPlansCommands } from "./commands/plans.ts";
import { addReportCommand } from "./commands/report.ts";
import { addRunCommand } from "./commands/run.ts";
import { addSchedulesCommands } from "./commands/schedules.ts";
import { addStatusCommand } from "./commands/status.ts";
import { addTestsCommands } from "./commands/tests.ts";
import { addTokenCommand } from "./commands/token.ts";
import { addTriggerCommand } from "./commands/trigger.ts";
import { addUploadCommand } from "./commands/upload.ts";
import { addVersionCommand } from "./commands/version.ts";
import { addWebhooksCommands } from "./commands/webhooks.ts";
import { ExitCode, exitCodeFor } from "./exit-codes.ts";
import {
  acceptGlobalOptionsAfterCommands,
  addGlobalOptions,
  type GlobalOptions,
  globalOptionsOf,
} from "./global-options.ts";
import { errorJson, errorText } from "./output.ts";
import { type CliIo, Session } from "./session.ts";
import { unknownAppMessage } from "./unknown-app.ts";
import { cliVersion } from "./version.ts";

export type { CliIo } from "./session.ts";

/** The program: its global options and help, and every command (one file each under commands/). */
function buildProgram(session: Session): Command {
  const { io } = session;
  const program = new Command("testbay").description(
    "Testbay from CI: upload builds, trigger test plans, wait for their results. Configured by TESTBAY_URL, TESTBAY_CLIENT_ID, TESTBAY_CLIENT_SECRET, TESTBAY_AUDIENCE and TESTBAY_TOKEN, or the flags below.",
  );
  addGlobalOptions(program);
  // Set before the commands are added: they inherit these settings.
  program
    .exitOverride()
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    })
    .showHelpAfterError("(run testbay --help for usage)")
    .addHelpText(
      "after",
      "\ntestbay --version prints the CLI's version (after a command, --version V is the app's version).\n\nExit codes: 0 ok (with --wait: all passed) · 1 a test failed or an execution errored or was cancelled · 2 usage or configuration error · 3 some plans failed to start · 4 the API refused the request · 5 gave up (retries or --timeout exhausted)",
    );

  // In the order `testbay --help` lists them.
  addTokenCommand(program, session);
  addUploadCommand(program, session);
  addTriggerCommand(program, session);
  addRunCommand(program, session);
  addStatusCommand(program, session);
  addPlansCommands(program, session);
  addFlankCommands(program, session);
  addVersionCommand(program, session);
  addAppsCommands(program, session);
  addExecutionCommands(program, session);
  addReportCommand(program, session);
  addTestsCommands(program, session);
  addWebhooksCommands(program, session);
  addSchedulesCommands(program, session);
  addAgentsCommand(program, session);

  acceptGlobalOptionsAfterCommands(program);
  return program;
}

/**
 * A 404 app_not_found for the command's --app that looks like a typo: said as an unknown app with the closest
 * registered name (rule 14). Undefined for every other error, when the server named the right one itself
 * (did_you_mean), or when no registered name is close: the server's detail and fix say it then.
 */
async function unknownAppText(session: Session, error: unknown): Promise<string | undefined> {
  const app = session.context.app;
  if (!(error instanceof TestbayApiError && error.code === "app_not_found") || !app) return undefined;
  if (typeof error.problem.did_you_mean === "string") return undefined;
  const message = await unknownAppMessage(session.testbay(), app).catch(() => undefined);
  if (!message?.includes("did you mean")) return undefined;
  return `error: ${message} (${error.status} ${error.code} on ${error.method} ${error.path})\n`;
}

/**
 * Runs the CLI with `argv` (the arguments after the program name) and returns its exit code: it never calls
 * process.exit, so tests run it in-process.
 */
export async function main(argv: string[], io: CliIo): Promise<number> {
  // The CLI's own version; `--version V` after a command is the app's version.
  if (argv.length === 1 && (argv[0] === "--version" || argv[0] === "-V")) {
    io.stdout.write(`${cliVersion()}\n`);
    return ExitCode.ok;
  }
  let globals: GlobalOptions = {};
  const session = new Session(io, () => globals);
  const program = buildProgram(session);
  program.hook("preAction", (_command, action) => {
    globals = globalOptionsOf(action);
    const { app, version, file } = action.opts<{ app?: string; version?: string; file?: string }>();
    session.context = { app, version, file };
  });
  try {
    await program.parseAsync(argv, { from: "user" });
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.code === "commander.helpDisplayed" || error.code === "commander.version") return ExitCode.ok;
      // commander printed what was wrong already (help when no command was given).
      return ExitCode.usage;
    }
    const code = exitCodeFor(error);
    io.stderr.write((await unknownAppText(session, error)) ?? errorText(error, session.context));
    if (globals.json)
      io.stdout.write(`${JSON.stringify({ error: errorJson(error), exit_code: code }, null, 2)}\n`);
    return code;
  }
  const outcome = session.outcome;
  if (!outcome) return ExitCode.usage;
  if (globals.json && outcome.json !== undefined) {
    io.stdout.write(`${JSON.stringify({ ...(outcome.json as object), exit_code: outcome.code }, null, 2)}\n`);
  }
  return outcome.code;
}

/** The binary: the real process, its environment and streams. */
export async function runFromProcess(): Promise<number> {
  // A reader that goes away (`testbay plans list | head`) is not an error of ours.
  for (const stream of [process.stdout, process.stderr]) {
    stream.on("error", (error: NodeJS.ErrnoException) => {
      if (error.code !== "EPIPE") throw error;
    });
  }
  const code = await main(process.argv.slice(2), {
    env: process.env,
    stdout: process.stdout,
    stderr: process.stderr,
    cwd: process.cwd(),
    onInterrupt: (handler) => {
      process.once("SIGINT", handler);
      return () => process.off("SIGINT", handler);
    },
  });
  // A poll's pause may still be pending: it must not keep an interrupted process alive.
  if (code === ExitCode.interrupted) process.exit(code);
  return code;
}
