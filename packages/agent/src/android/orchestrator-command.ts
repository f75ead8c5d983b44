/**
 * AndroidX Test Orchestrator's command (API.md §14), as its own documentation gives it (the javadoc of
 * androidx.test.orchestrator.AndroidTestOrchestrator and developer.android.com's "AndroidX Test Orchestrator"
 * page): the shell executor of the test-services APK starts `am instrument` of the orchestrator, which is told
 * the real runner with `-e targetInstrumentation`, lists the tests through it, then starts it once per test.
 * Every other `-e` reaches the runner unchanged; `clearPackageData` makes the orchestrator run `pm clear` of
 * the app and of the test package between tests. The `$(pm path …)` is the device shell's to expand.
 */
import { shellQuote } from "../steps/shell-quote.ts";

/** The orchestrator APK's package and its instrumentation (Maven androidx.test:orchestrator). */
export const ORCHESTRATOR_PACKAGE = "androidx.test.orchestrator";
export const ORCHESTRATOR_COMPONENT = "androidx.test.orchestrator/.AndroidTestOrchestrator";
/** The test-services APK's package (Maven androidx.test.services:test-services): its ShellMain runs the command. */
export const TEST_SERVICES_PACKAGE = "androidx.test.services";
const SHELL_MAIN = "androidx.test.services.shellexecutor.ShellMain";

export function orchestratedCommand(
  target: { testPackage: string; runner: string },
  args: ReadonlyArray<[string, string]>,
  options: { clearPackageData: boolean },
): string {
  const words = [
    `CLASSPATH=$(pm path ${TEST_SERVICES_PACKAGE})`,
    "app_process",
    "/",
    SHELL_MAIN,
    "am",
    "instrument",
    "-r",
    "-w",
    "-e",
    "targetInstrumentation",
    shellQuote(`${target.testPackage}/${target.runner}`),
  ];
  const given = new Set(args.map(([key]) => key));
  // The plan's environment may say clearPackageData itself (Flank's way); the step's option adds it otherwise.
  if (options.clearPackageData && !given.has("clearPackageData"))
    words.push("-e", "clearPackageData", "true");
  for (const [key, value] of args) words.push("-e", shellQuote(key), shellQuote(value));
  words.push(ORCHESTRATOR_COMPONENT);
  return words.join(" ");
}
