import type { Command } from "commander";
import { parseDuration } from "../duration.ts";
import { ExitCode } from "../exit-codes.ts";
import type { Session } from "../session.ts";

/** The app's package when gcloud.app can be read here; convert works without the build too. */
async function packageOf(session: Session, written: string): Promise<string | undefined> {
  const { readApkIdentity } = await import("../../apk/apk-identity.ts");
  const { expandVariables } = await import("../../flank/local-paths.ts");
  try {
    const file = session.resolvePath(expandVariables(written, session.io.env, "gcloud.app"));
    return (await readApkIdentity(file)).packageName;
  } catch {
    return undefined;
  }
}

/**
 * `testbay flank run|convert`: a Firebase Test Lab flank.yml run on Testbay as it is (API.md §14). The
 * converter, its YAML parser and the APK reader load only when a flank command runs (cold start, as plans.ts).
 */
export function addFlankCommands(program: Command, session: Session): void {
  const flank = program
    .command("flank")
    .description("Run a Flank configuration (flank.yml) on Testbay, or print the plan it becomes");

  flank
    .command("convert")
    .description("Print the test plan a flank.yml becomes (JSON, or --yaml for testbay.yaml); sends nothing")
    .option("-c, --config <file>", "the flank file", "flank.yml")
    .option("--plan-name <name>", "the plan's name (default flank:<path>)")
    .option("--yaml", "print a testbay.yaml for testbay plans apply instead of JSON")
    .action(async (options: { config: string; planName?: string; yaml?: boolean }) => {
      const { loadFlankFile } = await import("../../flank/load-flank-file.ts");
      const { planYaml } = await import("../../flank/plan-yaml.ts");
      const conversion = await loadFlankFile(session, options);
      const packageName = await packageOf(session, conversion.app);
      if (!packageName) {
        session.say(
          `note: ${conversion.app} (gcloud.app) could not be read here, so the plan has no package_name; testbay flank run reads it from the build.`,
        );
      }
      const body = { ...(packageName ? { package_name: packageName } : {}), ...conversion.plan };
      if (options.yaml) session.print(planYaml(conversion.plan, packageName));
      else if (!session.json) session.print(`${JSON.stringify(body, null, 2)}\n`);
      session.setOutcome({
        code: ExitCode.ok,
        json: {
          plan: body,
          runs: conversion.runs,
          version_files: conversion.files,
          local_result_dir: conversion.localResultDir,
          warnings: conversion.warnings,
        },
      });
    });

  flank
    .command("run")
    .description(
      "Upload the flank file's app and test APK (HEAD first) and its other-files and additional-apks, create or update its plan, trigger it; with --wait write JUnitReport.xml and matrix_ids.json to local-result-dir",
    )
    .option("-c, --config <file>", "the flank file", "flank.yml")
    .option("--app <package>", "the app's package (default: read from gcloud.app; needed for an app bundle)")
    .option("--version <version>", "the app version to register (default: the APK's versionName+versionCode)")
    .option("--plan-name <name>", "the plan's name (default flank:<path>)")
    .option("--wait", "wait until every run ends, then print a summary and write the results")
    .option("--timeout <duration>", "how long --wait waits (default: the file's run-timeout, else 60m)")
    .option("--dry-run", "check the file and the local files and say what would be done; sends nothing")
    .action(
      async (options: {
        config: string;
        app?: string;
        version?: string;
        planName?: string;
        wait?: boolean;
        timeout?: string;
        dryRun?: boolean;
      }) => {
        const timeoutMs = options.timeout ? parseDuration(options.timeout) : undefined;
        const { loadFlankFile } = await import("../../flank/load-flank-file.ts");
        const { runFlank } = await import("../../flank/flank-run.ts");
        const conversion = await loadFlankFile(session, options);
        session.setOutcome(await runFlank(session, conversion, { ...options, timeoutMs }));
      },
    );
}
