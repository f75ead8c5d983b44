import path from "node:path";
import type { Octokit } from "@octokit/rest";
import { cliVersion } from "../cli/version.ts";
import { dashboardLink } from "../cli/wait-view.ts";
import type { Testbay } from "../sdk/client.ts";
import { describeCause } from "../sdk/errors.ts";
import type { Execution } from "../sdk/models.ts";
import {
  type Annotation,
  annotationOf,
  type ClassifiedFailure,
  checkTitle,
  conclusionOf,
  executionSummary,
  type FollowEnd,
  fitted,
  inBatches,
} from "./check-run-content.ts";
import { type CodeownersRules, ownersOf, readCodeowners } from "./codeowners.ts";
import {
  type ExecutionGroups,
  failureGroupsOfExecution,
  type TestHistory,
  testHistoryOfPlan,
} from "./failure-groups.ts";
import { failureKind, type ReportedTest } from "./failure-kind.ts";
import type { GitHubTarget } from "./github-env.ts";
import { SourceFiles } from "./source-files.ts";

/** What `--github-checks`, `--github-comment` and `--source-root` asked for. */
export interface GitHubOptions {
  checks: boolean;
  comment: boolean;
  /** Absolute: where the tests' sources are searched. */
  sourceRoot: string;
}

/** What the report needs of the command that follows the executions (follow.ts). */
export interface GitHubReportContext {
  testbay: Testbay;
  target: GitHubTarget;
  options: GitHubOptions;
  /** The repository's root on disk: annotation paths are relative to it (GITHUB_WORKSPACE in Actions). */
  repositoryRoot: string;
  /** The plans' names by ID (follow.ts). */
  names: Map<string, string>;
  /** The comment's heading (the job summary's title). */
  title: string;
  say(text: string): void;
}

/** How long one request to GitHub may take. */
const githubRequestTimeoutMs = 30_000;

/** The permission each part needs in the workflow's `permissions:` block (docs/github.md). */
const permissionOf = { checks: "checks: write", comment: "pull-requests: write" } as const;

interface GitHubError {
  status?: number;
  message?: string;
}

const statusOf = (error: unknown) => (error as GitHubError)?.status;

/** The hidden marker the comment is found again by: one comment per set of plans and pull request. */
export function commentMarker(executions: Execution[]): string {
  const key = [...new Set(executions.map((e) => e.test_plan_id ?? e.id))].sort().join(",");
  return `<!-- testbay:pr-comment ${key} -->`;
}

/** The tests to annotate: every failed or errored test, and those that passed only on a retry (flaky). */
async function reportedTests(testbay: Testbay, execution: Execution): Promise<ReportedTest[]> {
  const tests: ReportedTest[] = [];
  const statuses: Array<"failed" | "errored" | "passed"> = ["failed", "errored"];
  if ((execution.summary.flaky ?? 0) > 0) statuses.push("passed");
  for (const status of statuses) {
    let cursor: string | undefined;
    for (let page = 0; page < 50; page++) {
      const found = await testbay.executions.tests(execution.id, {
        status,
        limit: 1000,
        ...(cursor ? { cursor } : {}),
      });
      tests.push(...(status === "passed" ? found.items.filter((t) => t.flaky) : found.items));
      if (!found.next_cursor) break;
      cursor = found.next_cursor;
    }
  }
  return tests;
}

/**
 * One check run per execution, created when the execution is known and completed when following it ends, with
 * its conclusion, a summary and one annotation per failure; and, with --github-comment, one pull-request comment
 * kept up to date with the same summaries. GitHub refusing (a token without the permission, an outage) is a
 * warning: the job's exit code stays Testbay's.
 */
export class GitHubReport {
  private readonly checkRuns = new Map<string, number>();
  private checksRefused = false;
  private codeowners: Promise<CodeownersRules> | undefined;
  private readonly sources: SourceFiles;
  private readonly histories = new Map<string, Promise<Map<string, TestHistory> | undefined>>();

  private constructor(
    private readonly context: GitHubReportContext,
    private readonly octokit: Octokit,
  ) {
    this.sources = new SourceFiles(context.options.sourceRoot, context.repositoryRoot);
  }

  /** Loads @octokit/rest only now: the CLI's other commands start without it. */
  static async create(context: GitHubReportContext): Promise<GitHubReport> {
    const { Octokit } = await import("@octokit/rest");
    const quiet = () => {};
    const octokit = new Octokit({
      auth: context.target.token,
      baseUrl: context.target.apiUrl,
      userAgent: `testbay-cli/${cliVersion()}`,
      log: { debug: quiet, info: quiet, warn: quiet, error: quiet },
      // A GitHub that does not answer must not hold the job: each request gives up after a while (a warning).
      request: {
        fetch: (url: string, init: RequestInit) =>
          fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(githubRequestTimeoutMs) }),
      },
    });
    return new GitHubReport(context, octokit);
  }

  private get repo() {
    return { owner: this.context.target.owner, repo: this.context.target.repo };
  }

  private planName(execution: Execution): string {
    if (execution.test_plan_id === null) return execution.name ?? "Appium session";
    return this.context.names.get(execution.test_plan_id) ?? execution.name ?? execution.test_plan_id;
  }

  /** A warning for what GitHub refused; a 403/404 names the permission the token lacks. */
  private refused(part: keyof typeof permissionOf, what: string, error: unknown): void {
    const status = statusOf(error);
    const cause = `${status ? `${status} ` : ""}${(error as GitHubError)?.message ?? describeCause(error)}`;
    const permission =
      status === 403 || status === 404
        ? `: the token needs the ${permissionOf[part]} permission (under permissions: in the workflow's job; docs/github.md)`
        : "";
    this.context.say(
      `warning: GitHub refused to ${what} (${cause})${permission}. The job's result is not changed by it.`,
    );
  }

  /** Creates the executions' check runs, in progress, each linking to its run on Testbay. */
  async started(executions: Execution[]): Promise<void> {
    if (!this.context.options.checks) return;
    for (const execution of executions) {
      if (this.checksRefused) return;
      try {
        const created = await this.octokit.rest.checks.create({
          ...this.repo,
          name: `Testbay: ${this.planName(execution)}`.slice(0, 100),
          head_sha: this.context.target.sha,
          status: "in_progress",
          external_id: execution.id,
          details_url: dashboardLink(this.context.testbay.transport.baseUrl, execution.id),
          output: {
            title: `${execution.status}: following ${execution.id}`,
            summary: `Testbay runs ${this.planName(execution)} (${execution.id}); this check completes when it ends.`,
          },
        });
        this.checkRuns.set(execution.id, created.data.id);
      } catch (error) {
        this.refused("checks", `create a check run for ${execution.id}`, error);
        // A token without checks: write is refused for every execution alike: one warning is enough.
        if ([403, 404].includes(statusOf(error) ?? 0)) this.checksRefused = true;
      }
    }
  }

  /** The failure groups of the execution's failures; undefined (with a note) when they cannot be read. */
  private async groupsOf(execution: Execution): Promise<ExecutionGroups | undefined> {
    return failureGroupsOfExecution(this.context.testbay, execution).catch((error: unknown) => {
      this.context.say(
        `note: could not read the failure groups of ${execution.id} (${describeCause(error)}); its failures are told apart by their tests' history.`,
      );
      return undefined;
    });
  }

  private historyOf(testPlanId: string) {
    let found = this.histories.get(testPlanId);
    if (!found) {
      found = testHistoryOfPlan(this.context.testbay, testPlanId).catch(() => undefined);
      this.histories.set(testPlanId, found);
    }
    return found;
  }

  /** Each failure of an execution with its kind, its source location and its owners. */
  async classified(execution: Execution): Promise<ClassifiedFailure[]> {
    const tests = await reportedTests(this.context.testbay, execution);
    if (tests.length === 0) return [];
    const planId = execution.test_plan_id;
    const groups = await this.groupsOf(execution);
    const history = planId ? await this.historyOf(planId) : undefined;
    this.codeowners ??= readCodeowners(this.context.repositoryRoot);
    const rules = await this.codeowners;
    const failures: ClassifiedFailure[] = [];
    for (const test of tests) {
      const location = await this.sources.locate(test);
      failures.push({
        test,
        kind: failureKind(test, execution.id, groups, history?.get(test.id)),
        location,
        owners: location ? ownersOf(rules, location.path) : [],
      });
    }
    return failures;
  }

  /** Completes one check run: the conclusion with the first 50 annotations, then the rest 50 an update. */
  private async complete(
    execution: Execution,
    failures: ClassifiedFailure[],
    summary: string,
    end: FollowEnd,
  ) {
    const id = this.checkRuns.get(execution.id);
    if (id === undefined) return;
    const annotations: Annotation[] = failures.map((f) =>
      annotationOf(f, f.test.classname.split("$")[0]?.replace(/\./g, "/") ?? f.test.classname),
    );
    const batches = inBatches(annotations);
    const output = (batch: Annotation[] | undefined) => ({
      title: checkTitle(execution, end),
      summary: fitted(summary),
      ...(batch?.length ? { annotations: batch } : {}),
    });
    try {
      await this.octokit.rest.checks.update({
        ...this.repo,
        check_run_id: id,
        status: "completed",
        conclusion: conclusionOf(execution, end),
        completed_at: new Date().toISOString(),
        output: output(batches[0]),
      });
      // Each update appends its annotations to those the check run has (GitHub's checks API).
      for (const batch of batches.slice(1)) {
        await this.octokit.rest.checks.update({ ...this.repo, check_run_id: id, output: output(batch) });
      }
    } catch (error) {
      this.refused("checks", `complete the check run of ${execution.id}`, error);
    }
  }

  /** Finds the comment by its marker and updates it, or creates it. */
  private async comment(body: string, executions: Execution[]): Promise<void> {
    const issue_number = this.context.target.pullRequest;
    if (issue_number === undefined) {
      this.context.say(
        "note: --github-comment: this workflow does not run for a pull request (no refs/pull/N in GITHUB_REF, no pull_request in the event): no comment written.",
      );
      return;
    }
    const marker = commentMarker(executions);
    try {
      const comments = await this.octokit.paginate(this.octokit.rest.issues.listComments, {
        ...this.repo,
        issue_number,
        per_page: 100,
      });
      const mine = comments.find((c) => c.body?.includes(marker));
      const text = fitted(`${marker}\n${body}`);
      if (mine)
        await this.octokit.rest.issues.updateComment({ ...this.repo, comment_id: mine.id, body: text });
      else await this.octokit.rest.issues.createComment({ ...this.repo, issue_number, body: text });
    } catch (error) {
      this.refused("comment", `write the comment on pull request #${issue_number}`, error);
    }
  }

  /** When following ends: every check run completed, then the comment written. Never throws. */
  async ended(executions: Execution[], end: FollowEnd): Promise<void> {
    const sections: string[] = [];
    const baseUrl = this.context.testbay.transport.baseUrl;
    for (const execution of executions) {
      let failures: ClassifiedFailure[] = [];
      try {
        failures = await this.classified(execution);
      } catch (error) {
        this.context.say(
          `note: could not read the failed tests of ${execution.id} for GitHub (${describeCause(error)}).`,
        );
      }
      const summary = executionSummary(execution, this.planName(execution), failures, baseUrl, end);
      sections.push(summary);
      if (this.context.options.checks) await this.complete(execution, failures, summary, end);
    }
    if (this.context.options.comment) {
      const sha = this.context.target.sha.slice(0, 7);
      await this.comment(
        [
          `### ${this.context.title}`,
          "",
          ...sections.flatMap((s) => [s, ""]),
          `_Commit ${sha}; updated by testbay on each run._`,
        ].join("\n"),
        executions,
      );
    }
  }
}

/** The repository's root: GITHUB_WORKSPACE in GitHub Actions, else the command's directory. */
export function repositoryRootOf(env: Record<string, string | undefined>, cwd: string): string {
  return path.resolve(cwd, env.GITHUB_WORKSPACE ?? ".");
}
