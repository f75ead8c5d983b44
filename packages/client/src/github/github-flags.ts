import { Option } from "commander";
import { UsageError } from "../cli/exit-codes.ts";
import { type GitHubTarget, gitHubTarget } from "./github-env.ts";

/** What follow.ts needs for --github-checks / --github-comment: the flags, resolved, and where to send. */
export interface GitHubFollow {
  checks: boolean;
  comment: boolean;
  /** Absolute. */
  sourceRoot: string;
  target: GitHubTarget;
}

export interface GitHubFlags {
  githubChecks?: boolean;
  githubComment?: boolean;
  sourceRoot: string;
}

/** --github-checks, --github-comment and --source-root, for run and status (docs/github.md); new ones each read. */
export const gitHubOptions = {
  get checks() {
    return new Option(
      "--github-checks",
      "with --wait: a GitHub check run per execution, with an annotation per failed test (GITHUB_TOKEN, GITHUB_REPOSITORY, GITHUB_SHA)",
    );
  },
  get comment() {
    return new Option(
      "--github-comment",
      "with --wait: one pull-request comment with the results, updated on each run",
    );
  },
  get sourceRoot() {
    return new Option(
      "--source-root <dir>",
      "where --github-checks looks for the tests' source files",
    ).default(".");
  },
};

/**
 * The GitHub part of following, or undefined without its flags; a UsageError (exit 2, before anything is
 * uploaded or triggered) when it is asked for without --wait or without GitHub's variables.
 */
export function gitHubFollow(
  options: object,
  wait: boolean,
  session: { io: { env: Record<string, string | undefined> }; resolvePath(file: string): string },
): GitHubFollow | undefined {
  // The command's options as commander parsed them: the GitHub ones are among them (gitHubOptions).
  const flags = options as GitHubFlags;
  if (!flags.githubChecks && !flags.githubComment) return undefined;
  const flag = flags.githubChecks ? "--github-checks" : "--github-comment";
  if (!wait)
    throw new UsageError(`${flag} needs --wait: the results are sent to GitHub once the executions end.`);
  return {
    checks: flags.githubChecks === true,
    comment: flags.githubComment === true,
    sourceRoot: session.resolvePath(flags.sourceRoot),
    target: gitHubTarget(session.io.env, flag),
  };
}
