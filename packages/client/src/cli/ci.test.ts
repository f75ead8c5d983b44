import { describe, expect, it } from "vitest";
import { ciMetadata } from "./ci.ts";

const githubPush = {
  GITHUB_ACTIONS: "true",
  GITHUB_REF: "refs/heads/main",
  GITHUB_REF_NAME: "main",
  GITHUB_HEAD_REF: "",
  GITHUB_SHA: "3f786850e387550fdab836ed7e6dc881de23001b",
  GITHUB_SERVER_URL: "https://github.com",
  GITHUB_REPOSITORY: "acme/app",
  GITHUB_RUN_ID: "9876543210",
};

describe("ciMetadata", () => {
  it("reads a GitHub Actions push: branch, commit and the run's URL, no pull request", () => {
    expect(ciMetadata(githubPush)).toEqual({
      provider: "github",
      branch: "main",
      commit: "3f786850e387550fdab836ed7e6dc881de23001b",
      build_url: "https://github.com/acme/app/actions/runs/9876543210",
    });
  });

  it("reads a GitHub pull request: the head branch, and the number from refs/pull/N/merge", () => {
    expect(
      ciMetadata({
        ...githubPush,
        GITHUB_REF: "refs/pull/42/merge",
        GITHUB_REF_NAME: "42/merge",
        GITHUB_HEAD_REF: "feature/login",
      }),
    ).toMatchObject({ provider: "github", branch: "feature/login", pull_request: "42" });
  });

  it("reads GitLab CI, the merge request's source branch first", () => {
    expect(
      ciMetadata({
        GITLAB_CI: "true",
        CI_COMMIT_REF_NAME: "main",
        CI_COMMIT_SHA: "a".repeat(40),
        CI_JOB_URL: "https://gitlab.example.com/acme/app/-/jobs/77",
      }),
    ).toEqual({
      provider: "gitlab",
      branch: "main",
      commit: "a".repeat(40),
      build_url: "https://gitlab.example.com/acme/app/-/jobs/77",
    });
    expect(
      ciMetadata({
        GITLAB_CI: "true",
        CI_COMMIT_REF_NAME: "refs/merge-requests/5/head",
        CI_MERGE_REQUEST_SOURCE_BRANCH_NAME: "fix/crash",
        CI_MERGE_REQUEST_IID: "5",
      }),
    ).toEqual({ provider: "gitlab", branch: "fix/crash", pull_request: "5" });
  });

  it("is undefined outside a known CI system, and leaves out what the server would refuse", () => {
    expect(ciMetadata({ CI: "true" })).toBeUndefined();
    expect(ciMetadata({})).toBeUndefined();
    expect(
      ciMetadata({ GITLAB_CI: "true", CI_COMMIT_REF_NAME: "b".repeat(256), CI_JOB_URL: "ftp://x/job" }),
    ).toEqual({ provider: "gitlab" });
  });
});
