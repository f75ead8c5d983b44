import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { readApkIdentity, versionOf } from "../apk/apk-identity.ts";
import { ciMetadata } from "../cli/ci.ts";
import { ExitCode, UsageError } from "../cli/exit-codes.ts";
import { extraFilesJson, uploadExtraFiles } from "../cli/extra-files.ts";
import { followExecutions } from "../cli/follow.ts";
import { executionTable, failedExecutionsText } from "../cli/output.ts";
import type { Outcome, Session } from "../cli/session.ts";
import { uploadBuild, uploadJson } from "../cli/upload-build.ts";
import { testPackageJson, uploadTestPackage } from "../cli/upload-test-package.ts";
import { dashboardLink } from "../cli/wait-view.ts";
import type { Execution } from "../sdk/models.ts";
import type { FlankConversion } from "./convert.ts";
import { exitCodeIgnoringFailedTests } from "./ignore-failed-tests.ts";
import { localFile } from "./local-paths.ts";
import { matrixIds } from "./matrix-ids.ts";
import { syncPlan } from "./plan-sync.ts";

export interface FlankRunOptions {
  app?: string | undefined;
  version?: string | undefined;
  wait?: boolean | undefined;
  /** --timeout in ms; undefined: the file's run-timeout, else 60 minutes. */
  timeoutMs?: number | undefined;
  dryRun?: boolean | undefined;
}

/** The local files of a run: the app, the test APK and the version files, each found before anything is sent. */
async function localFiles(session: Session, conversion: FlankConversion) {
  const find = (written: string, key: string) =>
    localFile(written, key, session.io.env, (file) => session.resolvePath(file));
  const app = await find(conversion.app, "gcloud.app");
  const test = await find(conversion.test, "gcloud.test");
  const files = [];
  for (const file of conversion.files) {
    files.push({
      name: file.name,
      path: await find(file.path, `version file ${file.name} (from the flank file)`),
    });
  }
  return { app, test, files };
}

/**
 * The app's package and the version to register: --app and --version when given, else read from the APK (its
 * package, and versionName+versionCode). An app bundle (.aab) or an APK this cannot read needs both options.
 */
async function identify(
  appPath: string,
  written: string,
  given: { app?: string | undefined; version?: string | undefined },
): Promise<{ app: string; version: string }> {
  if (given.app && given.version) return { app: given.app, version: given.version };
  let identity: Awaited<ReturnType<typeof readApkIdentity>>;
  try {
    identity = await readApkIdentity(appPath);
  } catch (error) {
    throw new UsageError(
      `gcloud.app ${written}: could not read its package name and version (${(error as Error).message}); give them with --app PACKAGE --version V.`,
    );
  }
  if (given.app && given.app !== identity.packageName) {
    throw new UsageError(`--app ${given.app}: gcloud.app ${written} is ${identity.packageName}.`);
  }
  const version = given.version ?? versionOf(identity);
  if (!version) {
    throw new UsageError(
      `gcloud.app ${written}: its manifest has neither versionName nor versionCode; give the version with --version V.`,
    );
  }
  return { app: identity.packageName, version };
}

/**
 * `testbay flank run`: the flank file's app and test APK uploaded HEAD-first under the version, its other-files
 * and additional-apks as version files, its plan created or updated by name, triggered num-test-runs times,
 * and with --wait followed like `run --wait`, writing Flank's JUnitReport.xml and matrix_ids.json in
 * local-result-dir.
 */
export async function runFlank(
  session: Session,
  conversion: FlankConversion,
  options: FlankRunOptions,
): Promise<Outcome> {
  const local = await localFiles(session, conversion);
  const { app, version } = await identify(local.app, conversion.app, options);
  session.context = { ...session.context, app, version, file: local.app };
  const resultDir = session.resolvePath(conversion.localResultDir);
  const timeoutMs = options.timeoutMs ?? (conversion.runTimeoutSeconds ?? 3600) * 1000;

  if (options.dryRun) {
    const lines = [
      `Dry run: nothing was sent. testbay flank run would:`,
      `  upload ${app} ${version} from ${local.app} (skipped if registered with this very build)`,
      `  upload its test package from ${local.test}`,
      ...local.files.map((file) => `  upload the version file ${file.name} from ${file.path}`),
      `  create or update the test plan ${conversion.plan.name}`,
      `  trigger it ${conversion.runs === 1 ? "once" : `${conversion.runs} times`}${options.wait ? `, wait up to ${Math.round(timeoutMs / 60000)} min and write ${path.join(resultDir, "JUnitReport.xml")}` : ""}`,
    ];
    session.say(lines.join("\n"));
    if (!session.json)
      session.print(`${JSON.stringify({ package_name: app, ...conversion.plan }, null, 2)}\n`);
    return {
      code: ExitCode.ok,
      json: {
        dry_run: true,
        package_name: app,
        version,
        plan: conversion.plan,
        files: local.files,
        runs: conversion.runs,
      },
    };
  }

  const uploaded = await uploadBuild(session, { app, version, file: local.app });
  const tests = await uploadTestPackage(session, { app, version, testFile: local.test });
  const files = await uploadExtraFiles(session, { app, version }, local.files);
  const { plan, action } = await syncPlan(session, app, conversion.plan);
  session.say(`Test plan ${plan.name} (${plan.id}): ${action}.`);

  const executions: Execution[] = [];
  const runNumbers = new Map<string, number>();
  const failed = [];
  const ci = ciMetadata(session.io.env);
  for (let run = 1; run <= conversion.runs; run++) {
    const batch = await session.testbay().triggers.runBatch({
      package_name: app,
      version,
      test_plan_ids: [plan.id],
      ...(ci ? { ci } : {}),
    });
    for (const execution of batch.executions) runNumbers.set(execution.id, run);
    executions.push(...batch.executions);
    failed.push(...batch.failed_executions);
    if (batch.failed_executions.length > 0) {
      session.say(failedExecutionsText(batch.failed_executions, 1, session.context));
      break;
    }
  }
  session.say(
    `Triggered ${plan.name} on ${app} ${version}${conversion.runs > 1 ? ` ${executions.length} of ${conversion.runs} times (num-test-runs)` : ""}.`,
  );
  const report: Record<string, unknown> = {
    upload: uploadJson(uploaded),
    test_package_upload: testPackageJson(tests),
    extra_files: extraFilesJson(files),
    plan: { id: plan.id, name: plan.name, action },
    executions,
    failed_executions: failed,
  };
  const startCode = failed.length > 0 ? ExitCode.plansFailedToStart : ExitCode.ok;
  const link = (id: string) => dashboardLink(session.testbay().transport.baseUrl, id);
  await mkdir(resultDir, { recursive: true });
  const writeIndex = async (current: Execution[]) => {
    const target = path.join(resultDir, "matrix_ids.json");
    await writeFile(target, `${JSON.stringify(matrixIds(current, runNumbers, link), null, 2)}\n`);
    return target;
  };

  if (!options.wait) {
    const index = await writeIndex(executions);
    session.say(`Wrote ${index}.`);
    if (!session.json) session.print(executionTable(executions, new Map([[plan.id, plan.name]])));
    return { code: startCode, json: report };
  }
  const followed = await followExecutions(session, session.testbay(), executions, {
    timeoutMs,
    junit: path.join(resultDir, "JUnitReport.xml"),
    title: `Testbay: ${conversion.plan.name} on ${app} ${version}`,
    report,
    startCode,
  });
  const final = ((followed.json as { executions?: Execution[] }).executions ?? executions) as Execution[];
  session.say(`Wrote ${await writeIndex(final)}.`);
  const code = exitCodeIgnoringFailedTests(followed.code, final, conversion.ignoreFailedTests);
  if (code !== followed.code)
    session.say("Tests failed, and the flank file sets ignore-failed-tests: true: exit 0.");
  return { code, json: followed.json };
}
