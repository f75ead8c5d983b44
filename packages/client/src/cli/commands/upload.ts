import type { Command } from "commander";
import { checkFile } from "../check-file.ts";
import { ExitCode } from "../exit-codes.ts";
import { checkExtraFiles, collectExtraFile, extraFilesJson, uploadExtraFiles } from "../extra-files.ts";
import type { Session } from "../session.ts";
import { uploadBuild, uploadJson } from "../upload-build.ts";
import { testPackageJson, uploadTestPackage } from "../upload-test-package.ts";

/** `testbay upload`: a build, and with --test-file its test package. */
export function addUploadCommand(program: Command, session: Session): void {
  program
    .command("upload")
    .description("Upload a build: HEAD first, and no transfer when the version is registered already")
    .requiredOption("--app <package>", "package name (exact, case-sensitive)")
    .requiredOption("--version <version>", "version identifier")
    .requiredOption("--file <path>", "the APK, AAB, IPA or zipped .app")
    .option(
      "--test-file <path>",
      "the test APK (app-debug-androidTest.apk), uploaded after the build; skipped when the version has this very file, refused when it has another",
    )
    .option(
      "--extra-file <name=path>",
      "a file the plans' additional_apks or push name, uploaded after the build (repeatable; skipped when the version has this very file)",
      collectExtraFile,
      [] as string[],
    )
    .action(
      async (options: {
        app: string;
        version: string;
        file: string;
        testFile?: string;
        extraFile: string[];
      }) => {
        // Both files are looked for before anything is sent: a typo must not leave a version without its tests.
        const file = await checkFile(session, options.file);
        const testFile = options.testFile
          ? await checkFile(session, options.testFile, "--test-file")
          : undefined;
        const extraFiles = await checkExtraFiles(session, options.extraFile);
        const result = await uploadBuild(session, { ...options, file });
        const tests = testFile ? await uploadTestPackage(session, { ...options, testFile }) : undefined;
        const files = await uploadExtraFiles(session, options, extraFiles);
        session.setOutcome({
          code: ExitCode.ok,
          json: {
            ...uploadJson(result),
            test_package_upload: testPackageJson(tests),
            extra_files: extraFilesJson(files),
          },
        });
      },
    );
}
