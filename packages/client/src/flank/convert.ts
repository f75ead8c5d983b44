import { ConversionContext } from "./conversion-context.ts";
import { deviceFilesOf } from "./device-files.ts";
import { devicesOf } from "./devices.ts";
import { environmentOf } from "./environment.ts";
import { flankSeconds } from "./flank-duration.ts";
import { FlankFileError, type FlankIssue, readFlankFile } from "./flank-file.ts";
import { flankKeys, gcloudKeys } from "./flank-keys.ts";
import type { FlankInstrumentationStep, FlankPlan, VersionFileSource } from "./flank-plan.ts";
import { shardingOf } from "./sharding.ts";
import { alwaysRunOf, filterOf } from "./test-targets.ts";

/** A flank file as Testbay runs it: the plan, what to upload, how to run and wait, and what it does not use. */
export interface FlankConversion {
  plan: FlankPlan;
  /** `gcloud.app` and `gcloud.test` as the file writes them. */
  app: string;
  test: string;
  /** other-files and additional-apks, uploaded as version files. */
  files: VersionFileSource[];
  /** `flank.num-test-runs`: how many times the plan is triggered. */
  runs: number;
  /** `flank.local-result-dir` (default results). */
  localResultDir: string;
  /** `flank.run-timeout`: how long to wait; undefined when the file sets none (or -1). */
  runTimeoutSeconds: number | undefined;
  /** `flank.ignore-failed-tests`: failed tests do not fail the command. */
  ignoreFailedTests: boolean;
  /** One line per key Testbay does not use or reads differently, in the file's order. */
  warnings: FlankIssue[];
}

/** Testbay's plan timeout bounds (API.md §5) and the most triggers one command makes. */
const planTimeout = { min: 30, max: 86_400 };
const maxRuns = 100;
/** gcloud reruns up to 10 times; Testbay's retry_failed_tests goes to 5. */
const maxRetries = 5;

/**
 * Converts a flank.yml (API.md §14's mapping) without touching the network: every key is mapped, named in a
 * warning, or an error at its line (FlankFileError, thrown with every error found).
 */
export function convertFlankFile(
  text: string,
  fileName: string,
  planName: string,
  env: Record<string, string | undefined> = {},
): FlankConversion {
  const file = readFlankFile(text, fileName);
  const context = new ConversionContext(file, env);

  for (const [section, keys] of [
    ["gcloud", gcloudKeys],
    ["flank", flankKeys],
  ] as const) {
    for (const [key, value] of (section === "gcloud" ? file.gcloud : file.flank).entries()) {
      const meaning = keys[key];
      if (meaning?.kind === "ignored") context.warn(value, `${value.name} is not used: ${meaning.instead}`);
    }
  }

  const app = requiredPath(context, "app", "the app APK to test");
  const test = requiredPath(context, "test", "the instrumentation test APK (app-debug-androidTest.apk)");
  const type = context.gcloud("type");
  if (type && type.value !== null && type.value !== "instrumentation") {
    context.error(
      type,
      `gcloud.type ${JSON.stringify(type.value)}: Testbay runs instrumentation tests (type: instrumentation)`,
    );
  }

  const { environment, coverage } = environmentOf(context);
  const files = deviceFilesOf(context);
  const step: FlankInstrumentationStep = { type: "instrumentation", use_orchestrator: true };
  const runner = context.gcloud("test-runner-class");
  if (runner?.value) step.runner = String(runner.value);
  const filter = filterOf(context);
  if (filter) step.filter = filter;
  if (environment) step.environment = environment;
  const orchestrator = context.gcloud("use-orchestrator");
  if (orchestrator && orchestrator.value !== null) step.use_orchestrator = orchestrator.value !== false;
  if (files.additionalApks) step.additional_apks = files.additionalApks;
  if (files.push) step.push = files.push;
  if (files.pull) step.pull = files.pull;
  if (files.pullFilter) step.pull_filter = files.pullFilter;
  if (coverage) step.coverage = true;
  const alwaysRun = alwaysRunOf(context);
  if (alwaysRun) step.always_run = alwaysRun;
  const video = context.gcloud("record-video");
  if (video && video.value !== null) step.record_video = video.value === true ? "always" : "never";
  Object.assign(step, shardingOf(context));
  const attempts = context.gcloud("num-flaky-test-attempts");
  if (attempts && attempts.value !== null) {
    const count = Number(attempts.value);
    if (!Number.isInteger(count) || count < 0) {
      context.error(
        attempts,
        `${attempts.name} ${JSON.stringify(attempts.value)}: a whole number from 0 to 10`,
      );
    } else if (count > 0) {
      step.retry_failed_tests = Math.min(count, maxRetries);
      if (count > maxRetries)
        context.warn(
          attempts,
          `${attempts.name} ${count}: Testbay reruns a failed test at most ${maxRetries} times`,
        );
    }
  }

  const plan: FlankPlan = { name: planName, devices: devicesOf(context), steps: [step] };
  const timeout = context.gcloud("timeout");
  if (timeout && timeout.value !== null) {
    const seconds = flankSeconds(timeout.value);
    if (seconds === undefined || seconds <= 0) {
      context.error(
        timeout,
        `gcloud.timeout ${JSON.stringify(timeout.value)}: a duration like 30m, 1h or 900 (seconds)`,
      );
    } else {
      plan.timeout_seconds = Math.min(planTimeout.max, Math.max(planTimeout.min, Math.round(seconds)));
      if (plan.timeout_seconds !== Math.round(seconds)) {
        context.warn(
          timeout,
          `gcloud.timeout ${timeout.value}: a plan's timeout is ${planTimeout.min} s to ${planTimeout.max} s; ${plan.timeout_seconds} s is used`,
        );
      }
    }
  }

  const runs = runsOf(context);
  const runTimeout = context.flank("run-timeout");
  let runTimeoutSeconds: number | undefined;
  if (runTimeout && runTimeout.value !== null) {
    const seconds = flankSeconds(runTimeout.value);
    if (seconds === undefined)
      context.error(
        runTimeout,
        `flank.run-timeout ${JSON.stringify(runTimeout.value)}: a duration like 60m, or -1 for none`,
      );
    else if (seconds > 0) runTimeoutSeconds = seconds;
  }
  const resultDir = context.flank("local-result-dir")?.value;

  const errors = [...context.errors].sort((a, b) => a.line - b.line || a.col - b.col);
  if (errors.length > 0) throw new FlankFileError(fileName, errors);
  const warnings = [...file.notes, ...context.warnings].sort((a, b) => a.line - b.line || a.col - b.col);
  return {
    plan,
    app: app ?? "",
    test: test ?? "",
    files: files.files,
    runs,
    localResultDir: typeof resultDir === "string" && resultDir.trim() ? resultDir : "results",
    runTimeoutSeconds,
    ignoreFailedTests: context.flank("ignore-failed-tests")?.value === true,
    warnings,
  };
}

function requiredPath(context: ConversionContext, key: "app" | "test", what: string): string | undefined {
  const value = context.gcloud(key);
  if (!value || typeof value.value !== "string" || value.value.trim() === "") {
    // Said at the gcloud: line, where the key belongs.
    const at = value ? context.file.at(value.segments) : context.file.at(["gcloud"], { key: true });
    context.errors.push({ ...at, message: `gcloud.${key} is missing: it names ${what}` });
    return undefined;
  }
  if (value.value.startsWith("gs://")) {
    context.error(
      value,
      `gcloud.${key} ${value.value}: Cloud Storage is not read: download it first (gsutil cp ${value.value} .) and name the local file`,
    );
    return undefined;
  }
  return value.value;
}

function runsOf(context: ConversionContext): number {
  const runs = context.flank("num-test-runs");
  if (!runs || runs.value === null) return 1;
  const count = Number(runs.value);
  if (!Number.isInteger(count) || count < 1 || count > maxRuns) {
    context.error(
      runs,
      `flank.num-test-runs ${JSON.stringify(runs.value)}: a whole number from 1 to ${maxRuns}`,
    );
    return 1;
  }
  return count;
}
