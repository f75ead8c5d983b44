import { type Command, Option } from "commander";
import { gitHubFollow, gitHubOptions } from "../../github/github-flags.ts";
import { resolvePlanIds } from "../../plans/by-name.ts";
import type { ExecutionPriority } from "../../sdk/models.ts";
import { checkFile } from "../check-file.ts";
import { collect } from "../comma-list.ts";
import { parseDuration } from "../duration.ts";
import { ExitCode, UsageError } from "../exit-codes.ts";
import { checkExtraFiles, collectExtraFile, extraFilesJson, uploadExtraFiles } from "../extra-files.ts";
import { followExecutions } from "../follow.ts";
import { executionTable } from "../output.ts";
import type { Session } from "../session.ts";
import { planHelp, triggerPlans } from "../trigger-plans.ts";
import { uploadBuild, uploadJson } from "../upload-build.ts";
import { testPackageJson, uploadTestPackage } from "../upload-test-package.ts";

/** `testbay run`: the pipeline flow, upload, trigger and with --wait the results. */
export function addRunCommand(program: Command, session: Session): void {
  program
    .command("run")
    .description("The pipeline flow: upload if needed, one batch trigger, and with --wait the results")
    .requiredOption("--app <package>", "package name (exact, case-sensitive)")
    .requiredOption("--version <version>", "version identifier")
    .option("--file <path>", "the build to upload first (skipped when the version is registered)")
    .option(
      "--test-file <path>",
      "the test APK to upload after the build, before the trigger (skipped when the version has this very file, refused when it has another)",
    )
    .option(
      "--extra-file <name=path>",
      "a file the plans' additional_apks or push name, uploaded after the build, before the trigger (repeatable)",
      collectExtraFile,
      [] as string[],
    )
    .option("--plan <id-or-name>", planHelp, collect, [] as string[])
    .option("--wait", "wait until every execution ends, then print a summary")
    .option("--timeout <duration>", "how long --wait waits, e.g. 90s, 60m, 2h", "60m")
    .option("--junit <file>", "with --wait: write one merged JUnit XML report here")
    .addOption(
      new Option(
        "--priority <level>",
        "which of the organization's queued runs a device takes first: high, normal (the server's default) or low",
      ).choices(["high", "normal", "low"]),
    )
    .addOption(gitHubOptions.checks)
    .addOption(gitHubOptions.comment)
    .addOption(gitHubOptions.sourceRoot)
    .action(
      async (options: {
        app: string;
        version: string;
        file?: string;
        testFile?: string;
        extraFile: string[];
        plan: string[];
        wait?: boolean;
        timeout: string;
        junit?: string;
        priority?: ExecutionPriority;
      }) => {
        const timeoutMs = parseDuration(options.timeout);
        if (options.junit && !options.wait)
          throw new UsageError("--junit needs --wait: the report is written once all executions end.");
        if (options.plan.length === 0) throw new UsageError("Name at least one test plan with --plan ID.");
        const github = gitHubFollow(options, options.wait === true, session);
        const file = options.file ? await checkFile(session, options.file) : undefined;
        const testFile = options.testFile
          ? await checkFile(session, options.testFile, "--test-file")
          : undefined;
        const extraFiles = await checkExtraFiles(session, options.extraFile);
        const testbay = session.testbay();
        // Names first: a mistyped plan name is reported before any upload.
        options.plan = await resolvePlanIds(testbay, options.app, options.plan);
        const uploaded = file ? await uploadBuild(session, { ...options, file }) : undefined;
        const tests = testFile ? await uploadTestPackage(session, { ...options, testFile }) : undefined;
        const files = await uploadExtraFiles(session, options, extraFiles);

        const batch = await triggerPlans(session, options);
        const failed = batch.failed_executions;
        const report: Record<string, unknown> = {
          upload: uploaded ? uploadJson(uploaded) : null,
          test_package_upload: testPackageJson(tests),
          extra_files: extraFilesJson(files),
          executions: batch.executions,
          failed_executions: failed,
        };
        const startCode = failed.length ? ExitCode.plansFailedToStart : ExitCode.ok;
        if (!options.wait) {
          if (!session.json) session.print(executionTable(batch.executions));
          session.setOutcome({ code: startCode, json: report });
          return;
        }

        session.setOutcome(
          await followExecutions(session, testbay, batch.executions, {
            timeoutMs,
            junit: options.junit,
            title: `Testbay: ${options.app} ${options.version}`,
            report,
            startCode,
            github,
          }),
        );
      },
    );
}
