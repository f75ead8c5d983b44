import path from "node:path";
import type { DestinationStream } from "pino";
import { type Config, loadConfig } from "../config.ts";

/** Where a stream of text goes: process.stdout and process.stderr, or a test's buffer. */
export interface TextSink {
  write(text: string): unknown;
}

/**
 * What one run of `testbay-server` gets from its surroundings instead of reading the process's own: the
 * environment, the output streams and the working directory. The bin (cli.ts) passes the real process's; the
 * suites run admin commands in their own process with their own (cli/run-server-cli.ts), which is how ~80 Node
 * start-ups came out of the CLI's suite (issue 26).
 */
export interface CliIo {
  env: NodeJS.ProcessEnv;
  stdout: TextSink;
  stderr: TextSink;
  /** The directory a relative TESTBAY_DATA_DIR (and its default, ./.testbay) is taken from. */
  cwd: string;
  /**
   * Where `start` sends the server's log: unset, stdout as its configuration says (http/logging.ts). A run in
   * a test's process sets it, so the log is read with the rest of what the command printed.
   */
  serverLog?: DestinationStream;
}

/** TESTBAY_DATA_DIR when unset or blank: config.ts's default, which admin-store.ts's messages name too. */
const defaultDataDir = "./.testbay";

/**
 * The configuration the run's environment describes. The data dir is made absolute against the run's cwd
 * here, since loadConfig (config.ts) resolves it against the process's; for the bin the two are the same
 * directory, and the result is too. Relative `sqlite:` and `file:` URLs are still the process's business.
 */
export function configOf(io: CliIo): Config {
  const dataDir = io.env.TESTBAY_DATA_DIR?.trim() ? io.env.TESTBAY_DATA_DIR : defaultDataDir;
  return loadConfig({ ...io.env, TESTBAY_DATA_DIR: path.resolve(io.cwd, dataDir) });
}
