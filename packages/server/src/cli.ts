// The `testbay-server` bin (bin/testbay-server.js imports it as "#cli"): the program runs in cli/, given this
// process's environment, streams and directory, and only a failure exits here. A success leaves the process to
// end by itself, as it always has: when an admin command has closed its store, or, for `start`, on a signal.
import { runServerCli } from "./cli/run-server-cli.ts";

const code = await runServerCli(process.argv.slice(2), {
  env: process.env,
  stdout: process.stdout,
  stderr: process.stderr,
  cwd: process.cwd(),
});
if (code !== 0) process.exit(code);
