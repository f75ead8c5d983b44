import { appendFile, writeFile } from "node:fs/promises";
import type { GitHubFollow } from "../github/github-flags.ts";
import type { GitHubReport } from "../github/github-report.ts";
import type { Testbay } from "../sdk/client.ts";
import type { Clock } from "../sdk/clock.ts";
import { describeCause } from "../sdk/errors.ts";
import { type Execution, isFinal, type TestCase } from "../sdk/models.ts";
import { formatDuration } from "./duration.ts";
import { ExitCode } from "./exit-codes.ts";
import { junitReport } from "./junit.ts";
import { executionTable, statusCounts } from "./output.ts";
import type { CliIo } from "./session.ts";
import { cliVersion } from "./version.ts";
import { waitForExecutions } from "./wait.ts";
import { dashboardOrigin, finalReportMarkdown, finalReportText, waitView } from "./wait-view.ts";

/** What following executions needs of the command that runs it (session.ts). */
export interface FollowSession {
  readonly io: CliIo;
  readonly clock: Clock;
  readonly json: boolean;
  say(text: string): void;
  resolvePath(file: string): string;
}

export interface FollowOptions {
  /** The --timeout, counted from `deadlineAt` minus it when given (status --wait read the executions first). */
  timeoutMs: number;
  deadlineAt?: number | undefined;
  junit?: string | undefined;
  /** The job summary's heading (GITHUB_STEP_SUMMARY). */
  title: string;
  /** What the command reports besides the executions (run: its upload and failed_executions). */
  report: Record<string, unknown>;
  /** The exit code when every execution passed: run's 3 when some plans did not start. */
  startCode: ExitCode;
  /** --github-checks / --github-comment (packages/client/src/github/, docs/github.md). */
  github?: GitHubFollow | undefined;
}

/** The GitHub check runs and comment, with @octokit/rest loaded only now (the CLI starts without it). */
async function startGitHubReport(
  session: FollowSession,
  testbay: Testbay,
  executions: Execution[],
  names: Map<string, string>,
  options: FollowOptions,
): Promise<GitHubReport | undefined> {
  if (!options.github) return undefined;
  const { GitHubReport, repositoryRootOf } = await import("../github/github-report.ts");
  const { target, ...flags } = options.github;
  const report = await GitHubReport.create({
    testbay,
    target,
    options: flags,
    repositoryRoot: repositoryRootOf(session.io.env, session.resolvePath(".")),
    names,
    title: options.title,
    say: (text) => session.say(text),
  });
  await report.started(executions);
  return report;
}

/** Plan names for the summary, in one list call per app; best effort (the summary shows IDs without them). */
async function planNames(testbay: Testbay, executions: Execution[]): Promise<Map<string, string>> {
  const names = new Map<string, string>();
  // A session that names no app has no package, and no plan to name (plan-label.ts).
  const packageNames = new Set(executions.flatMap((e) => (e.package_name === null ? [] : [e.package_name])));
  for (const packageName of packageNames) {
    try {
      const page = await testbay.testPlans.list({ package_name: packageName, limit: 200 });
      for (const plan of page.items) names.set(plan.id, plan.name);
    } catch {
      // The summary names plans by ID.
    }
  }
  return names;
}

/** Failed and errored tests of the executions that have any, for the report at the end (best effort). */
async function failedTestsOf(
  testbay: Testbay,
  executions: Execution[],
): Promise<Map<string, { items: TestCase[]; more: boolean }>> {
  const found = new Map<string, { items: TestCase[]; more: boolean }>();
  for (const execution of executions) {
    if ((execution.summary?.failed ?? 0) === 0 && !["failed", "errored"].includes(execution.status)) continue;
    const items: TestCase[] = [];
    let more = false;
    for (const status of ["failed", "errored"] as const) {
      const page = await testbay.executions.tests(execution.id, { status, limit: 20 }).catch(() => undefined);
      if (!page) continue;
      items.push(...page.items);
      more ||= page.next_cursor !== null;
    }
    found.set(execution.id, { items, more });
  }
  return found;
}

function endCode(executions: Execution[]): ExitCode {
  return executions.every((e) => e.status === "passed") ? ExitCode.ok : ExitCode.testsFailed;
}

/**
 * Follows executions until they all end or --timeout passes, as `run --wait` and `status --wait` both do: the
 * live view, then the summary table, the merged JUnit file, the job summary and every failed test with why.
 * What this CLI cannot read in a newer server's answers becomes a warning, never a crash before the report:
 * the table and the JUnit file are written before the details that read the most fields.
 */
export async function followExecutions(
  session: FollowSession,
  testbay: Testbay,
  executions: Execution[],
  options: FollowOptions,
): Promise<{ code: ExitCode; json: unknown }> {
  const { io } = session;
  const print = (text: string) => io.stdout.write(text);
  const warned = new Set<string>();
  const warn = (what: string, error: unknown) => {
    const line = `warning: could not read ${what} (${describeCause(error)}): this CLI (${cliVersion()}) may be older than the server; get the server's own with curl -fsSLO ${dashboardOrigin(testbay.transport.baseUrl)}/downloads/testbay.mjs`;
    if (warned.has(line)) return;
    warned.add(line);
    session.say(line);
  };

  const { timeoutMs, report, startCode } = options;
  const deadlineAt = options.deadlineAt ?? session.clock.now() + timeoutMs;
  session.say(
    `Waiting for ${executions.length} execution${executions.length === 1 ? "" : "s"} (at most ${formatDuration(deadlineAt - session.clock.now())})…`,
  );
  const names = await planNames(testbay, executions);
  const github = await startGitHubReport(session, testbay, executions, names, options);
  const view = waitView(io.stderr, io.env, names);
  const show = (current: Execution[]) => {
    try {
      view.update(current);
    } catch (error) {
      warn("the executions' progress", error);
    }
  };
  show(executions);
  let latest = executions;
  let unsubscribe = () => {};
  const interrupted = new Promise<"interrupted">((resolve) => {
    unsubscribe = io.onInterrupt?.(() => resolve("interrupted")) ?? (() => {});
  });
  const waiting = waitForExecutions(testbay, executions, {
    clock: session.clock,
    deadlineAt,
    onPoll: (current) => {
      latest = current;
      show(current);
    },
  });
  const first = await Promise.race([waiting, interrupted]);
  unsubscribe();
  view.stop();
  if (first === "interrupted") {
    const open = latest.filter((e) => !isFinal(e.status));
    const ids = (open.length ? open : latest).map((e) => e.id).join(" ");
    // On a terminal the shell echoed ^C where the cursor was: start on a line of its own.
    session.say(
      `${io.stderr.isTTY ? "\n" : ""}Interrupted: stopped waiting. The executions go on on the server; follow them with testbay status ${ids} --wait, or stop them with testbay cancel ID.`,
    );
    await github?.ended(latest, "interrupted");
    return { code: ExitCode.interrupted, json: { ...report, executions: latest, interrupted: true } };
  }
  const waited = first;

  if (!session.json) {
    try {
      print(executionTable(waited.executions, names));
    } catch (error) {
      warn("the executions for the summary table", error);
    }
  }
  if (options.junit) {
    const target = session.resolvePath(options.junit);
    const reports = new Map<string, string>();
    for (const execution of waited.executions) {
      if (["queued", "running"].includes(execution.status)) continue;
      // Best effort: without the agents' report the execution keeps its per-device-run testcase.
      const xml = await testbay.executions.junit(execution.id).catch(() => undefined);
      if (xml !== undefined) reports.set(execution.id, xml);
    }
    await writeFile(target, junitReport(waited.executions, names, reports));
    session.say(`Wrote the JUnit report to ${target}.`);
  }

  const failedTests = await failedTestsOf(testbay, waited.executions);
  const finalReport = {
    executions: waited.executions,
    names,
    failedTests,
    baseUrl: testbay.transport.baseUrl,
  };
  const unreadable = (executionId: string, error: unknown) =>
    warn(`a failed test's details in ${executionId}`, error);
  const text = finalReportText(finalReport, unreadable);
  // A blank line keeps the table a block of its own (scripts cut it off there).
  if (session.json) session.say(text);
  else print(`\n${text}`);
  if (io.env.GITHUB_STEP_SUMMARY) {
    await appendFile(
      io.env.GITHUB_STEP_SUMMARY,
      finalReportMarkdown(finalReport, options.title, unreadable),
    ).catch((error: unknown) =>
      session.say(`note: could not append to GITHUB_STEP_SUMMARY: ${describeCause(error)}`),
    );
  }
  await github?.ended(waited.executions, waited.timedOut ? "timed_out" : "ended");
  const json = {
    ...report,
    executions: waited.executions,
    failed_tests: Object.fromEntries([...failedTests].map(([id, t]) => [id, t.items])),
    timed_out: waited.timedOut,
    polls: waited.polls,
  };

  if (waited.timedOut) {
    const left = waited.executions.filter((e) => !isFinal(e.status));
    session.say(
      `error: gave up waiting after ${formatDuration(timeoutMs)}: ${left.length} execution${left.length === 1 ? "" : "s"} still ${statusCounts(left)}. They go on; follow them with testbay status ${left.map((e) => e.id).join(" ")} --wait`,
    );
    return { code: ExitCode.gaveUp, json };
  }
  if (startCode !== ExitCode.ok) return { code: startCode, json };
  const code = endCode(waited.executions);
  session.say(
    code === ExitCode.ok ? "All executions passed." : `Not all passed: ${statusCounts(waited.executions)}.`,
  );
  return { code, json };
}
