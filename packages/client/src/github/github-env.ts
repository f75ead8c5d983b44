import { readFileSync } from "node:fs";
import { UsageError } from "../cli/exit-codes.ts";

type Env = Record<string, string | undefined>;

/** Where the check runs and the pull-request comment go, read from what GitHub Actions sets (docs/github.md). */
export interface GitHubTarget {
  token: string;
  owner: string;
  repo: string;
  /** The commit the check runs are on: a pull request's head commit, else GITHUB_SHA. */
  sha: string;
  /** GITHUB_API_URL: https://api.github.com, or a GitHub Enterprise Server's https://HOST/api/v3. */
  apiUrl: string;
  /** The pull request's number, when the workflow runs for one (the comment needs it). */
  pullRequest: number | undefined;
}

const set = (value: string | undefined) => (value && value.trim() !== "" ? value.trim() : undefined);

/** GITHUB_EVENT_PATH's payload (the webhook event that started the workflow); undefined when unreadable. */
function eventPayload(
  env: Env,
): { pull_request?: { number?: unknown; head?: { sha?: unknown } } } | undefined {
  const file = set(env.GITHUB_EVENT_PATH);
  if (!file) return undefined;
  try {
    return JSON.parse(readFileSync(file, "utf8"));
  } catch {
    return undefined;
  }
}

/**
 * The target of --github-checks / --github-comment, or a UsageError (exit 2, nothing triggered) naming what is
 * missing. On a pull_request event GITHUB_SHA is the merge commit GitHub made, which the pull request's checks
 * tab does not show: the head commit from the event's payload is used then.
 */
export function gitHubTarget(env: Env, flag: string): GitHubTarget {
  const token = set(env.GITHUB_TOKEN);
  const repository = set(env.GITHUB_REPOSITORY);
  const missing = [
    ...(token ? [] : ["GITHUB_TOKEN"]),
    ...(repository ? [] : ["GITHUB_REPOSITORY"]),
    ...(set(env.GITHUB_SHA) ? [] : ["GITHUB_SHA"]),
  ];
  if (missing.length > 0) {
    throw new UsageError(
      `${flag} needs ${missing.join(", ")}: GitHub Actions sets them, except GITHUB_TOKEN, which the step passes with env: { GITHUB_TOKEN: \${{ secrets.GITHUB_TOKEN }} } (docs/github.md).`,
    );
  }
  const [owner, repo, ...rest] = (repository as string).split("/");
  if (!owner || !repo || rest.length > 0)
    throw new UsageError(
      `GITHUB_REPOSITORY is "${repository}": it must be OWNER/REPO, as GitHub Actions sets it.`,
    );
  const event = eventPayload(env);
  const fromRef = /^refs\/pull\/(\d+)\/(?:merge|head)$/.exec(env.GITHUB_REF ?? "")?.[1];
  const fromEvent = event?.pull_request?.number;
  const pullRequest = fromRef ? Number(fromRef) : typeof fromEvent === "number" ? fromEvent : undefined;
  const headSha = event?.pull_request?.head?.sha;
  return {
    token: token as string,
    owner,
    repo,
    sha:
      typeof headSha === "string" && /^[0-9a-f]{40}$/.test(headSha)
        ? headSha
        : (set(env.GITHUB_SHA) as string),
    apiUrl: (set(env.GITHUB_API_URL) ?? "https://api.github.com").replace(/\/+$/, ""),
    pullRequest,
  };
}
