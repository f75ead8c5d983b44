/**
 * A small Node program that runs Appium for the agent and takes it down when the agent is gone. Appium runs in a
 * process group of its own (appium-server.ts), so no signal aimed at the agent reaches it; the agent stops it on
 * SIGTERM and on exit, but an agent that is killed outright (SIGKILL, the OOM killer, a crash in native code)
 * runs no code at all. The watchdog holds the reading end of a pipe whose writing end only the agent holds: the
 * kernel closes it when the agent dies, however it dies, and the watchdog then stops Appium and its whole group.
 * (Linux's PR_SET_PDEATHSIG would do this in one call, but Node does not offer it, and macOS has nothing alike.)
 *
 * It is passed to `node -e` as text, so that it runs the same from the TypeScript sources and from a build.
 * Arguments: the grace in ms between SIGTERM and SIGKILL, then Appium's executable and its arguments. It exits
 * with Appium's exit code (128 + the signal's number when a signal ended Appium).
 */
export const appiumWatchdogSource = `
const { spawn } = require("node:child_process");
const { constants } = require("node:os");
const [graceText, executable, ...args] = process.argv.slice(1);
const grace = Number(graceText);
const appium = spawn(executable, args, { stdio: ["ignore", "inherit", "inherit"] });
let stopping = false;
function stopGroup() {
  if (stopping) return;
  stopping = true;
  try { appium.kill("SIGTERM"); } catch {}
  setTimeout(() => { try { process.kill(-process.pid, "SIGKILL"); } catch {} }, grace);
}
// The agent's stop signals the whole group: Appium gets the SIGTERM too; the watchdog waits for it to exit.
process.on("SIGTERM", () => {});
process.on("SIGINT", () => {});
process.stdin.on("error", stopGroup);
process.stdin.on("close", stopGroup);
process.stdin.on("end", stopGroup);
process.stdin.resume();
appium.on("error", (error) => {
  process.stderr.write("could not start " + executable + ": " + error.message + "\\n");
  process.exit(127);
});
appium.on("exit", (code, signal) => {
  // Stopping on its own (the agent is gone): what Appium's drivers started goes with the group, the watchdog too.
  if (stopping) { try { process.kill(-process.pid, "SIGKILL"); } catch {} }
  process.exit(code ?? 128 + (constants.signals[signal] ?? 0));
});
`;
