import { type Command, Help, Option } from "commander";
import type { ConnectionFlags } from "./config.ts";

/** The program's own options: where the API is, who calls it, and --json. */
export interface GlobalOptions extends ConnectionFlags {
  json?: boolean;
}

const globalFlags: Array<[flags: string, description: string]> = [
  ["--url <url>", "API base URL, e.g. http://127.0.0.1:8080/v1 (TESTBAY_URL)"],
  ["--client-id <id>", "client ID (TESTBAY_CLIENT_ID)"],
  ["--client-secret <secret>", "client secret (TESTBAY_CLIENT_SECRET)"],
  ["--audience <audience>", "the server's audience (TESTBAY_AUDIENCE, default testbay)"],
  ["--token <token>", "a token from `testbay token` (TESTBAY_TOKEN): no token call is made"],
  ["--json", "print machine-readable JSON on stdout (messages stay on stderr)"],
];

/** Every option made here: globalOptionsOf reads these and no command's option of the same name. */
const globalOptionSet = new WeakSet<Option>();

function globalOption(flags: string, description: string): Option {
  const option = new Option(flags, description);
  globalOptionSet.add(option);
  return option;
}

/** The global options, on the program: its help lists them. */
export function addGlobalOptions(program: Command): void {
  for (const [flags, description] of globalFlags) program.addOption(globalOption(flags, description));
}

/**
 * Called once every command is registered: the global options are taken before the command (`testbay --json
 * upload …`) and after it (`testbay upload … --json`), and a command may give a global flag a meaning of its own
 * (`webhooks create --url` is the webhook's address, not the API's).
 *
 * commander takes the program's options wherever they stand, unless the program has positional options: then only
 * those before the command's name are the program's. So the program's options are positional, and every command
 * gets hidden copies of them (its help is unchanged) except of the flags it declares itself. A group whose
 * subcommands declare a global flag themselves (webhooks) is positional too, so that after the subcommand's name
 * the flag is the subcommand's: `testbay --url API webhooks create --url HOOK`.
 */
export function acceptGlobalOptionsAfterCommands(program: Command): void {
  positionalOptions(program);
  program.configureHelp({ ...program.configureHelp(), subcommandTerm });
  for (const command of program.commands) acceptGlobalOptions(command);
}

function acceptGlobalOptions(command: Command): void {
  for (const [flags, description] of globalFlags) {
    const copy = globalOption(flags, description).hideHelp();
    if (declaresItself(command, copy.long)) continue;
    command.addOption(copy);
    if (command.commands.some((sub) => declaresItself(sub, copy.long, { orBelow: true }))) {
      positionalOptions(command);
    }
  }
  if (command.commands.length > 0) command.configureHelp({ ...command.configureHelp(), subcommandTerm });
  for (const sub of command.commands) acceptGlobalOptions(sub);
}

function positionalOptions(command: Command): void {
  command.enablePositionalOptions();
  // Positional only while its own options are parsed: commander's "(Did you mean --json?)" after an unknown flag
  // looks no further up than a positional command, and a typo after the command is still one of a global flag.
  command.hook("preSubcommand", () => {
    command.enablePositionalOptions(false);
  });
}

/** commander's term for a command in its parent's help, whose "[options]" does not count the hidden copies. */
function subcommandTerm(command: Command): string {
  const term = new Help().subcommandTerm(command);
  return command.options.some((option) => !option.hidden) ? term : term.replace(" [options]", "");
}

function declaresItself(command: Command, long: string | undefined, { orBelow = false } = {}): boolean {
  const own = command.options.some((option) => option.long === long && !globalOptionSet.has(option));
  return own || (orBelow && command.commands.some((sub) => declaresItself(sub, long, { orBelow })));
}

/**
 * The global options given to `command`, before it or after it; the one nearest the end of the command line wins
 * when a flag is given twice. A command's own option of the same name (webhooks create --url) is not one of them.
 */
export function globalOptionsOf(command: Command): GlobalOptions {
  const values: Record<string, unknown> = {};
  const chain: Command[] = [];
  for (let at: Command | null = command; at; at = at.parent) chain.unshift(at);
  for (const at of chain) {
    for (const option of at.options) {
      if (!globalOptionSet.has(option)) continue;
      const value = at.getOptionValue(option.attributeName());
      if (value !== undefined) values[option.attributeName()] = value;
    }
  }
  return values as GlobalOptions;
}
