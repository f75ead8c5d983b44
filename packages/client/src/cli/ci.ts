import type { CiMetadata } from "../sdk/models.ts";

type Env = Record<string, string | undefined>;

/** The server's bounds per member (API.md §6): a value past them is left out rather than cut into a wrong one. */
const maxLength: Record<keyof CiMetadata, number> = {
  provider: 64,
  branch: 255,
  commit: 64,
  pull_request: 64,
  build_url: 2048,
};

const nonEmpty = (value: string | undefined) => (value && value.trim() !== "" ? value.trim() : undefined);

function fitted(ci: CiMetadata): CiMetadata | undefined {
  const kept: CiMetadata = {};
  for (const [name, value] of Object.entries(ci) as [keyof CiMetadata, string | undefined][]) {
    if (value === undefined || value.length > maxLength[name]) continue;
    if (name === "build_url" && !/^https?:\/\/./.test(value)) continue;
    kept[name] = value;
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}

function github(env: Env): CiMetadata {
  const ref = env.GITHUB_REF ?? "";
  const server = nonEmpty(env.GITHUB_SERVER_URL)?.replace(/\/+$/, "");
  const repository = nonEmpty(env.GITHUB_REPOSITORY);
  const runId = nonEmpty(env.GITHUB_RUN_ID);
  const ci: CiMetadata = { provider: "github" };
  // On a pull request GITHUB_REF_NAME is "123/merge"; the branch a person knows is the head branch.
  const branch = nonEmpty(env.GITHUB_HEAD_REF) ?? nonEmpty(env.GITHUB_REF_NAME);
  if (branch) ci.branch = branch;
  const commit = nonEmpty(env.GITHUB_SHA);
  if (commit) ci.commit = commit;
  const pull = /^refs\/pull\/(\d+)\/(?:merge|head)$/.exec(ref)?.[1];
  if (pull) ci.pull_request = pull;
  if (server && repository && runId) ci.build_url = `${server}/${repository}/actions/runs/${runId}`;
  return ci;
}

function gitlab(env: Env): CiMetadata {
  const ci: CiMetadata = { provider: "gitlab" };
  const branch = nonEmpty(env.CI_MERGE_REQUEST_SOURCE_BRANCH_NAME) ?? nonEmpty(env.CI_COMMIT_REF_NAME);
  if (branch) ci.branch = branch;
  const commit = nonEmpty(env.CI_COMMIT_SHA);
  if (commit) ci.commit = commit;
  const mergeRequest = nonEmpty(env.CI_MERGE_REQUEST_IID);
  if (mergeRequest) ci.pull_request = mergeRequest;
  const job = nonEmpty(env.CI_JOB_URL);
  if (job) ci.build_url = job;
  return ci;
}

/**
 * Where a trigger comes from, read from the CI system's own variables (GitHub Actions, GitLab CI), so an
 * execution can be found by branch, commit or pull request; undefined outside a CI system it knows.
 */
export function ciMetadata(env: Env): CiMetadata | undefined {
  if (env.GITHUB_ACTIONS === "true") return fitted(github(env));
  if (env.GITLAB_CI === "true") return fitted(gitlab(env));
  return undefined;
}
