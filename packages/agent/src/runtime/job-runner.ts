import { mkdir, mkdtemp, rm } from "node:fs/promises";
import path from "node:path";
import { type AgentJob, type RunStatus, type Step, TestbayApiError } from "@testbay/client";
import { runStep } from "../steps/run-step.ts";
import { skippedOnShard } from "../steps/shard-batches.ts";
import type { ShardContext, StepContext, StepOutcome } from "../steps/step-types.ts";
import { testMessage } from "../steps/test-message.ts";
import { isAppiumJob, runAppiumJob } from "./appium-job.ts";
import { collectArtifacts } from "./artifacts.ts";
import { EventReporter } from "./event-reporter.ts";
import { type AppJob, hasApp } from "./job-app.ts";
import type { JobRunnerOptions } from "./job-runner-options.ts";
import { withShellAppium } from "./shell-appium.ts";
import { versionFileGetter } from "./version-files.ts";

/** Why a job stopped before its steps were done. */
export type StopReason = "cancelled" | "timeout" | "lease_lost" | "shutdown";

export interface JobResult {
  status: RunStatus | "abandoned";
  reason: string | null;
}

const now = () => new Date().toISOString();

/**
 * Runs one claimed job: the plan's steps in order, each in a fresh directory, while heartbeats keep the
 * lease and watch for a cancel; then uploads the artifacts and completes. A step that does not pass stops
 * the plan (the steps after it are reported skipped). Only a lost lease ends a job without completing
 * it: someone else has the run by then.
 */
export async function runJob(job: AgentJob, options: JobRunnerOptions): Promise<JobResult> {
  const { client } = options;
  const stop = new AbortController();
  const stopWith = (reason: StopReason) => {
    if (!stop.signal.aborted) stop.abort(reason);
  };
  const reporter = new EventReporter({
    send: (events) => client.agent.events(job.lease_id, events),
    onCancelRequested: () => stopWith("cancelled"),
  });
  const heartbeatMs = Math.max(1000, (job.lease_ttl_seconds * 1000) / 3);
  const heartbeat = setInterval(() => {
    client.agent.heartbeat(job.lease_id).then(
      (answer) => answer.cancel_requested && stopWith("cancelled"),
      (error) => {
        if (error instanceof TestbayApiError && error.code === "lease_lost") stopWith("lease_lost");
        else options.log(`heartbeat failed (will try again): ${(error as Error).message}`);
      },
    );
  }, heartbeatMs);
  const planTimeoutMs = job.plan.timeout_seconds * 1000;
  const deadline = Date.now() + planTimeoutMs;
  const timeout = setTimeout(() => stopWith("timeout"), planTimeoutMs);
  const onShutdown = () => stopWith("shutdown");
  options.shutdown.addEventListener("abort", onShutdown, { once: true });
  if (options.shutdown.aborted) onShutdown();

  const jobDir = await mkdtemp(path.join(options.workRoot, "job-"));
  const artifactsDir = path.join(jobDir, "artifacts");
  await mkdir(artifactsDir);
  try {
    // A WebDriver session's job (API.md §12) is one appium step whose end decides the run; a plan's job is
    // its steps, the worst of which decides.
    const sessionResult = isAppiumJob(job)
      ? await runAppiumJob(job, { jobDir, artifactsDir, reporter, stop: stop.signal, options })
      : undefined;
    const outcomes = sessionResult
      ? []
      : hasApp(job)
        ? await runSteps(job, { jobDir, artifactsDir, deadline, reporter, stop: stop.signal, options })
        : noAppOutcome(job, reporter);
    const stopped = stop.signal.aborted ? (stop.signal.reason as StopReason) : undefined;
    if (stopped === "lease_lost") {
      options.log(`job ${job.lease_id}: lease lost, stopped without reporting`);
      return { status: "abandoned", reason: "lease_lost" };
    }
    await uploadArtifacts(job, artifactsDir, reporter, options);
    await reporter.flushAll(options.shutdown);
    const result = sessionResult ?? finalResult(outcomes, stopped, options.deviceLost?.() ?? false);
    const completion = {
      status: result.status,
      ...(result.reason ? { reason: result.reason } : {}),
    };
    try {
      await completeWithSetup(job, completion, options);
    } catch (error) {
      // A completion resent after a lost answer finds the lease already ended: it did complete.
      if (!(error instanceof TestbayApiError && error.code === "lease_lost")) throw error;
    }
    return result;
  } finally {
    clearInterval(heartbeat);
    clearTimeout(timeout);
    options.shutdown.removeEventListener("abort", onShutdown);
    await rm(jobDir, { recursive: true, force: true });
  }
}

type Completion = Parameters<JobRunnerOptions["client"]["agent"]["complete"]>[1];

/**
 * Completes with the device's `setup_ms` (API.md §13). A server from before §13 refuses the unknown field (400):
 * the completion is sent again without it, so the run's result is never lost for it.
 */
async function completeWithSetup(job: AgentJob, completion: Completion, options: JobRunnerOptions) {
  const { client } = options;
  if (options.setupMs === undefined) return client.agent.complete(job.lease_id, completion);
  try {
    return await client.agent.complete(job.lease_id, {
      ...completion,
      setup_ms: Math.round(options.setupMs),
    } as Completion);
  } catch (error) {
    if (!(error instanceof TestbayApiError && error.status === 400)) throw error;
    options.log(`the server does not take setup_ms yet (${error.message}); completed without it`);
    return client.agent.complete(job.lease_id, completion);
  }
}

interface StepsRun {
  jobDir: string;
  artifactsDir: string;
  deadline: number;
  reporter: EventReporter;
  stop: AbortSignal;
  options: JobRunnerOptions;
}

/**
 * A plan's job without a version (a server that sent one by mistake): nothing can run, and every step says so,
 * rather than the agent failing on it.
 */
function noAppOutcome(job: AgentJob, reporter: EventReporter): StepOutcome[] {
  const message = "the job names no app version; only an Appium session may";
  for (const index of job.plan.steps.keys()) {
    reporter.push({
      type: "step_finished",
      at: now(),
      step_index: index,
      status: index === 0 ? "errored" : "skipped",
      message: index === 0 ? message : null,
    });
  }
  return [{ status: "errored", message }];
}

async function runSteps(job: AppJob, run: StepsRun): Promise<StepOutcome[]> {
  const { reporter, stop } = run;
  const outcomes: StepOutcome[] = [];
  const steps = job.plan.steps;
  let appPath: Promise<string> | undefined;
  let testPackagePath: Promise<string> | undefined;
  const shard = jobShard(job);
  const versionFiles = versionFileGetter(job, run.options.client, run.options.cache);
  for (const [index, step] of steps.entries()) {
    const previous = outcomes.at(-1);
    if (stop.aborted || (previous && previous.status !== "passed")) {
      reporter.push({
        type: "step_finished",
        at: now(),
        step_index: index,
        status: "skipped",
        message: null,
      });
      continue;
    }
    const label = `step ${index + 1}/${steps.length} (${step.name ?? step.type})`;
    const notHere = skippedOnShard(step, shard);
    if (notHere !== null) {
      // Rule 1 of sharding: another shard runs it, and its results are counted there once. Not a failure, so
      // the steps after it still run.
      reporter.push({ type: "log", at: now(), stream: "agent", line: `${label} not run here: ${notHere}` });
      reporter.push({
        type: "step_finished",
        at: now(),
        step_index: index,
        status: "skipped",
        message: notHere,
      });
      continue;
    }
    reporter.push({ type: "step_started", at: now(), step_index: index });
    reporter.push({ type: "log", at: now(), stream: "agent", line: `${label} started` });
    const workDir = path.join(run.jobDir, `step-${index + 1}`);
    await mkdir(workDir);
    const context: StepContext = {
      workDir,
      artifactsDir: run.artifactsDir,
      appPath: () => {
        appPath ??= run.options.cache.get(job.binary.sha256, (destination) =>
          run.options.client.versions
            .downloadBinary(job.package_name, job.version, destination)
            .then(() => {}),
        );
        return appPath;
      },
      binary: job.binary.metadata,
      binarySizeBytes: job.binary.size_bytes,
      testPackage: job.test_package,
      testPackagePath: () => {
        const testPackage = job.test_package;
        if (!testPackage) return Promise.reject(new Error("the version has no test package"));
        testPackagePath ??= run.options.cache.get(testPackage.sha256, (destination) =>
          run.options.client.versions
            .downloadTestPackage(job.package_name, job.version, destination)
            .then(() => {}),
        );
        return testPackagePath;
      },
      packageName: job.package_name,
      version: job.version,
      versionFilePath: versionFiles,
      androidTools: run.options.androidTools ?? null,
      deviceSettings: deviceSettingsOf(job),
      // Which run this is, for scripts that name reports or files after it.
      env: {
        ...job.env,
        TESTBAY_EXECUTION_ID: job.execution_id,
        TESTBAY_ATTEMPT: String(job.device_run.attempt),
      },
      device: job.device,
      signal: stop,
      timeoutMs: stepTimeoutMs(step, run.deadline),
      log: (stream, line) => reporter.push({ type: "log", at: now(), stream, line }),
      // Every runner's messages within the server's limit (JUnit's and instrumentation's are already; xcresult's
      // are whatever Xcode wrote): one over it would have the whole batch of events refused.
      testCase: (c) =>
        reporter.push({ type: "test_case", step_index: index, ...c, message: testMessage(c.message) }),
      shard: shard && {
        ...shard,
        listTests: async (tests) => {
          // The server plans from what it has: this shard's tests reported so far must not wait behind it.
          await reporter.flush();
          return run.options.client.agent.shardTests(job.lease_id, index, tests);
        },
        nextBatch: async (finished, options) => {
          // The batch just run is marked done only once its test cases are stored.
          await reporter.flush();
          return run.options.client.agent.nextBatch(job.lease_id, index, finished, options);
        },
      },
    };
    // A shell step on a device of an agent offering Appium gets an Appium for that device (shell-appium.ts).
    const appium = run.options.appium;
    const outcome =
      step.type === "shell" && job.device && appium
        ? await withShellAppium(
            appium,
            job.device,
            {
              artifactsDir: run.artifactsDir,
              stepNumber: index + 1,
              log: (line) => reporter.push({ type: "log", at: now(), stream: "agent", line }),
            },
            (env) => runStep(step, { ...context, env: { ...context.env, ...env } }),
          )
        : await runStep(step, context);
    outcomes.push(outcome);
    const how = outcome.message ? `${outcome.status}: ${outcome.message}` : outcome.status;
    reporter.push({ type: "log", at: now(), stream: "agent", line: `${label} ${how}` });
    reporter.push({
      type: "step_finished",
      at: now(),
      step_index: index,
      status: outcome.status,
      message: outcome.message,
    });
  }
  return outcomes;
}

/** The device entry's locale and orientation (API.md §14), set on the device before a device step runs. */
function deviceSettingsOf(job: AgentJob): StepContext["deviceSettings"] {
  const entry = job.device_entry;
  if (!entry) return {};
  return {
    ...(entry.locale === undefined ? {} : { locale: entry.locale }),
    ...(entry.orientation === undefined ? {} : { orientation: entry.orientation }),
  };
}

/**
 * Which shard of its device entry the job's device run is (API.md §5 `shards`): `device_run.shard` and
 * `device_run.shard_count`, 0 of 1 from a server that does not shard.
 */
function jobShard(job: AgentJob): Pick<ShardContext, "index" | "count"> {
  const run = job.device_run as { shard?: unknown; shard_count?: unknown };
  const index = typeof run.shard === "number" ? run.shard : 0;
  const count = typeof run.shard_count === "number" ? run.shard_count : 1;
  return { index, count };
}

function stepTimeoutMs(step: Step, deadline: number): number {
  const left = Math.max(0, deadline - Date.now());
  const own = "timeout_seconds" in step && step.timeout_seconds ? step.timeout_seconds * 1000 : left;
  return Math.min(own, left);
}

async function uploadArtifacts(
  job: AgentJob,
  dir: string,
  reporter: EventReporter,
  options: JobRunnerOptions,
) {
  const { files, refused } = await collectArtifacts(dir);
  for (const name of refused) {
    reporter.push({
      type: "log",
      at: now(),
      stream: "agent",
      line: `artifact not kept (name not allowed): ${name}`,
    });
  }
  for (const artifact of files) {
    try {
      await options.client.agent.uploadArtifact(
        job.lease_id,
        artifact.name,
        artifact.file,
        artifact.contentType,
      );
    } catch (error) {
      const line = `artifact ${artifact.name} not kept: ${(error as Error).message}`;
      reporter.push({ type: "log", at: now(), stream: "agent", line });
    }
  }
}

/**
 * How the job ends: a stop decides first, then a lost device (the run is handed back: reason device_lost),
 * then the worst step (errored over failed over passed).
 */
function finalResult(
  outcomes: readonly StepOutcome[],
  stopped: StopReason | undefined,
  deviceWentDown: boolean,
): { status: RunStatus; reason: string | null } {
  if (stopped === "cancelled") return { status: "cancelled", reason: "cancelled" };
  if (stopped === "timeout") return { status: "errored", reason: "timeout" };
  if (stopped === "shutdown") return { status: "errored", reason: "agent_shutdown" };
  if (outcomes.some((o) => o.deviceLost)) return { status: "errored", reason: "device_lost" };
  // A managed device that crashed and was restarted under a step may be back before the step asks whether it is
  // there: the step then reads the lost device as its own error. Its pool knows better (agent.ts).
  if (deviceWentDown && outcomes.some((o) => o.status !== "passed")) {
    return { status: "errored", reason: "device_lost" };
  }
  if (outcomes.some((o) => o.status === "errored")) return { status: "errored", reason: "step_errored" };
  if (outcomes.some((o) => o.status === "failed")) return { status: "failed", reason: "step_failed" };
  if (outcomes.some((o) => o.status === "cancelled")) return { status: "cancelled", reason: "cancelled" };
  return { status: "passed", reason: null };
}
