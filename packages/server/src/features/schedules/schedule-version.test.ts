import { describe, expect, it } from "vitest";
import { ApiError } from "../../errors.ts";
import { parseScheduleVersion } from "./schedule-version.ts";

describe("parseScheduleVersion", () => {
  it.each([
    ["latest", { kind: "latest" }],
    ["latest:branch=main", { kind: "branch", branch: "main" }],
    ["latest:branch=release/2.x", { kind: "branch", branch: "release/2.x" }],
    ["latest:branch=feature=x", { kind: "branch", branch: "feature=x" }],
    ["1.4.2", { kind: "named", version: "1.4.2" }],
    ["2.0.0-rc.1+build.77", { kind: "named", version: "2.0.0-rc.1+build.77" }],
  ])("reads %j", (text, expected) => {
    expect(parseScheduleVersion(text)).toEqual(expected);
  });

  it.each([
    "latest:main",
    "latest:branch=",
    "latest:branch=a\nb",
    `latest:branch=${"b".repeat(256)}`,
    "-1.0",
    "1.0 beta",
  ])("refuses %j with 400 on /version and the three forms in the fix", (text) => {
    let refused: unknown;
    try {
      parseScheduleVersion(text);
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(ApiError);
    const problem = refused as ApiError;
    expect(problem.status).toBe(400);
    expect(problem.extra.errors).toEqual([expect.objectContaining({ path: "/version", in: "body" })]);
    expect(problem.fix).toMatch(/"latest".*"latest:branch=main".*"1\.4\.2"/);
  });
});
