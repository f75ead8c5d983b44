// --github-checks and --github-comment against a real Testbay server and a stand-in for GitHub's REST API that
// holds every request to GitHub's published OpenAPI description (test/github-stand-in.ts): a run with 120
// failures completes its check run as a failure with three batches of annotations (50, 50, 20), each on its
// test's source file with its owners from CODEOWNERS and its kind; the pull-request comment is written once and
// updated by the next run (found by its marker); a passing run's check is a success; a token GitHub refuses
// (403) is a warning naming the permission, and the exit code stays the run's.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { GitHubStandIn } from "../../test/github-stand-in.ts";
import { inProcessCli } from "../../test/in-process-cli.ts";

let server: TestServer;
let github: GitHubStandIn;
let dir: string;
let ci: Awaited<ReturnType<TestServer["createClient"]>>;
let token: string;
/** The test's own calls, under another client: the CLI's paced calls use up its client's rate limit. */
let ownToken: string;
let agent: Record<string, string>;
let planId: string;
/** Runs during the CLI's sleeps: the agent's part of the run. */
let duringSleep: (() => Promise<void>) | undefined;

const sha = "0123456789abcdef0123456789abcdef01234567";
const cli = inProcessCli(() => ({
  server,
  credentials: ci,
  cwd: dir,
  token,
  duringSleep: () => duringSleep?.(),
}));
const githubEnv = () => ({
  GITHUB_TOKEN: "ghs_standin",
  GITHUB_REPOSITORY: "acme/shop-android",
  GITHUB_SHA: sha,
  GITHUB_API_URL: github.url,
  GITHUB_REF: "refs/pull/7/merge",
  GITHUB_WORKSPACE: dir,
});

/** `testbay run` of the checkout plan with `--wait` and these flags, `agentPart` running during its sleeps. */
async function runCheckout(flags: string[], agentPart: () => Promise<void>) {
  duringSleep = agentPart;
  try {
    return await cli(
      ["run", "--app", "com.example.basic", "--version", "1.2.3", "--plan", "checkout", "--wait", ...flags],
      { env: githubEnv() },
    );
  } finally {
    duringSleep = undefined;
  }
}

interface ReportedCase {
  classname: string;
  name: string;
  status: "passed" | "failed" | "errored";
  message?: string;
  details?: string;
  retry?: number;
}

/** The agent's part: takes the queued run, reports these test cases, ends it failed (or passed). */
function agentReports(cases: ReportedCase[], status: "passed" | "failed"): () => Promise<void> {
  return async () => {
    const claimed = await call(`${server.baseUrl}/agent/claim`, {
      headers: agent,
      json: { agent_id: "host-1", devices: [], step_types: ["inspect"] },
    });
    if (claimed.status !== 200) return;
    const lease = claimed.body.job.lease_id;
    const events = cases.map((c, i) => ({ seq: i + 1, type: "test_case", step_index: 0, ...c }));
    expect(
      (await call(`${server.baseUrl}/agent/jobs/${lease}/events`, { headers: agent, json: { events } }))
        .status,
    ).toBe(200);
    const failed = cases.filter((c) => c.status !== "passed" && c.retry === undefined).length;
    const done = await call(`${server.baseUrl}/agent/jobs/${lease}/complete`, {
      headers: agent,
      json: { status, summary: { tests: cases.length, passed: cases.length - failed, failed, skipped: 0 } },
    });
    expect(done.status).toBe(200);
  };
}

/** 118 failed login and cart tests, one errored and one that passed on its retry: 120 to annotate. */
function firstRunCases(): ReportedCase[] {
  const cases: ReportedCase[] = [];
  for (let i = 0; i < 60; i++)
    cases.push({
      classname: "com.example.login.LoginTest",
      name: i === 0 ? "logsIn" : `rejectsPassword${i}`,
      status: "failed",
      message: `expected "Welcome" but was "Error ${i}"`,
      ...(i === 0
        ? {
            details:
              "java.lang.AssertionError: expected\n\tat com.example.login.LoginTest.logsIn(LoginTest.kt:17)",
          }
        : {}),
    });
  for (let i = 0; i < 58; i++)
    cases.push({
      classname: "com.example.cart.CartTest",
      name: `pays${i}`,
      status: "failed",
      message: "total 0.00",
    });
  cases.push({
    classname: "com.example.SearchTest",
    name: "findsShoes",
    status: "errored",
    message: "Instrumentation crashed",
  });
  cases.push(
    {
      classname: "com.example.cart.CartTest",
      name: "refunds",
      status: "failed",
      message: "timeout",
      retry: 0,
    },
    { classname: "com.example.cart.CartTest", name: "refunds", status: "passed", retry: 1 },
  );
  return cases;
}

beforeAll(async () => {
  server = await startTestServer();
  github = new GitHubStandIn();
  await github.start();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-github-"));
  ci = await server.createClient("acme", "ci");
  token = await server.token(ci);
  ownToken = await server.token(await server.createClient("acme", "ci"));
  agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
  await registerBasicApp(server, { "x-api-key": token });
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: { "x-api-key": token },
    json: {
      name: "checkout",
      package_name: "com.example.basic",
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    },
  });
  expect(plan.status).toBe(201);
  planId = plan.body.id;
  // The app's repository: test sources, and owners (the last matching line wins).
  const login = path.join(dir, "app/src/androidTest/java/com/example/login");
  await mkdir(login, { recursive: true });
  await writeFile(
    path.join(login, "LoginTest.kt"),
    "package com.example.login\n\nclass LoginTest {\n  @Test\n  fun rejectsPassword1() {}\n}\n",
  );
  const cart = path.join(dir, "app/src/androidTest/java/com/example/cart");
  await mkdir(cart, { recursive: true });
  await writeFile(
    path.join(cart, "CartTest.java"),
    "package com.example.cart;\n\npublic class CartTest {\n  @Test\n  public void pays0() {}\n}\n",
  );
  await mkdir(path.join(dir, ".github"));
  await writeFile(
    path.join(dir, ".github/CODEOWNERS"),
    "# Owners\n*  @acme/mobile\n**/login/ @acme/login-team\n/app/src/androidTest/java/com/example/cart/*.java @acme/payments @carol\n",
  );
});

afterAll(async () => {
  await github?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

beforeEach(() => {
  github.reset();
});

describe("testbay run --github-checks --github-comment", () => {
  let firstExecution: string;

  it("completes a check run as a failure with 120 annotations in three batches, and writes the comment", async () => {
    const run = await runCheckout(
      ["--github-checks", "--github-comment"],
      agentReports(firstRunCases(), "failed"),
    );
    expect(run.code, run.stderr).toBe(1);
    expect(github.invalid).toEqual([]);
    expect(run.stderr).not.toMatch(/warning/);
    firstExecution = /^(ex_\w+)/m.exec(run.stdout)?.[1] as string;

    const created = github.called("checks/create");
    expect(created).toHaveLength(1);
    expect(created[0]?.authorization).toBe("token ghs_standin");
    expect(created[0]?.body).toMatchObject({
      head_sha: sha,
      status: "in_progress",
      external_id: firstExecution,
      name: "Testbay: checkout",
    });
    expect(created[0]?.path).toBe("/repos/acme/shop-android/check-runs");

    const updates = github.called("checks/update");
    expect(
      updates.map((u) => (u.body?.output as { annotations?: unknown[] } | undefined)?.annotations?.length),
    ).toEqual([50, 50, 20]);
    expect(updates[0]?.body).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(updates.slice(1).map((u) => u.body?.conclusion)).toEqual([undefined, undefined]);

    const [checkRun] = [...github.checkRuns.values()];
    expect(checkRun).toMatchObject({ status: "completed", conclusion: "failure" });
    expect(checkRun?.output.title).toBe("failed: 119 failed, 1 passed (1 flaky) of 120 tests");
    expect(checkRun?.output.summary).toContain(`[${firstExecution} on Testbay]`);
    const annotations = checkRun?.annotations ?? [];
    expect(annotations).toHaveLength(120);

    const byTitle = (title: string) => annotations.find((a) => String(a.title).endsWith(title));
    // On the line its stack trace names, owned by the login team (its directory's rule is the last match).
    expect(byTitle("com.example.login.LoginTest.logsIn")).toMatchObject({
      path: "app/src/androidTest/java/com/example/login/LoginTest.kt",
      start_line: 17,
      end_line: 17,
      annotation_level: "failure",
      title: "🆕 new: com.example.login.LoginTest.logsIn",
    });
    expect(byTitle("com.example.login.LoginTest.logsIn")?.message).toMatch(
      /^New failure: its failure group was first seen in this execution\.\nOwners: @acme\/login-team\n\nexpected "Welcome" but was "Error 0"$/,
    );
    expect(byTitle("com.example.login.LoginTest.logsIn")?.raw_details).toContain("LoginTest.kt:17");
    // On the line that declares it.
    expect(byTitle("com.example.login.LoginTest.rejectsPassword1")).toMatchObject({ start_line: 5 });
    expect(byTitle("com.example.cart.CartTest.pays0")).toMatchObject({
      path: "app/src/androidTest/java/com/example/cart/CartTest.java",
      start_line: 5,
    });
    expect(byTitle("com.example.cart.CartTest.pays0")?.message).toContain("Owners: @acme/payments @carol");
    expect(byTitle("com.example.cart.CartTest.refunds")).toMatchObject({
      annotation_level: "warning",
      title: "🎲 flaky: com.example.cart.CartTest.refunds",
    });
    expect(byTitle("com.example.cart.CartTest.refunds")?.message).toMatch(/^Flaky: passed on a retry/);
    // No source file: the annotation names the class's path and says it was not found.
    expect(byTitle("com.example.SearchTest.findsShoes")).toMatchObject({
      path: "com/example/SearchTest",
      start_line: 1,
    });
    expect(byTitle("com.example.SearchTest.findsShoes")?.message).toContain("not found under --source-root");

    expect(github.called("issues/create-comment")).toHaveLength(1);
    expect(github.comments).toHaveLength(1);
    const comment = github.comments[0];
    expect(comment?.issue_number).toBe(7);
    expect(comment?.body).toMatch(
      /^<!-- testbay:pr-comment tp_\w+ -->\n### Testbay: com\.example\.basic 1\.2\.3/,
    );
    expect(comment?.body).toContain(`[${firstExecution} on Testbay]`);
    expect(comment?.body).toContain("119 new, 1 flaky");
  }, 120_000);

  it("status --wait updates the same comment on the next run; a failure seen before is known, a quarantined one said so", async () => {
    const tests = await call(
      `${server.baseUrl}/executions/${firstExecution}/tests?status=failed&limit=1000`,
      {
        headers: { "x-api-key": ownToken },
      },
    );
    const pays1 = tests.body.items.find((t: { name: string }) => t.name === "pays1");
    expect(
      (
        await call(`${server.baseUrl}/tests/${pays1.id}/quarantine`, {
          method: "PUT",
          headers: { "x-api-key": ownToken },
          json: { reason: "TB-9" },
        })
      ).status,
    ).toBe(200);
    const triggered = await call(`${server.baseUrl}/testplan/run`, {
      headers: { "x-api-key": ownToken },
      json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
    });
    expect(triggered.status).toBe(200);
    const second = triggered.body.execution.id as string;
    await agentReports(
      [
        { classname: "com.example.cart.CartTest", name: "pays0", status: "failed", message: "total 0.00" },
        { classname: "com.example.cart.CartTest", name: "pays1", status: "failed", message: "total 0.00" },
        {
          classname: "com.example.login.LoginTest",
          name: "logsOut",
          status: "failed",
          message: "still signed in",
        },
      ],
      "failed",
    )();

    const status = await cli(["status", second, "--wait", "--github-checks", "--github-comment"], {
      env: githubEnv(),
    });
    expect(status.code, status.stderr).toBe(1);
    expect(github.invalid).toEqual([]);
    expect(github.called("issues/list-comments")).toHaveLength(1);
    expect(github.called("issues/create-comment")).toHaveLength(0);
    expect(github.called("issues/update-comment")).toHaveLength(1);
    expect(github.comments).toHaveLength(1);
    expect(github.comments[0]?.body).toContain(`[${second} on Testbay]`);
    expect(github.comments[0]?.body).not.toContain(firstExecution);

    const run = [...github.checkRuns.values()].find((r) => r.external_id === second);
    expect(run).toMatchObject({ conclusion: "failure" });
    const annotation = (name: string) => run?.annotations.find((a) => String(a.title).endsWith(name));
    expect(annotation("CartTest.pays0")?.title).toMatch(/^🔁 known/);
    // Its failure group (API.md §16) was first seen in the first run.
    expect(annotation("CartTest.pays0")?.message).toMatch(
      new RegExp(
        `^Known failure: its failure group was first seen in ${firstExecution} \\(version 1\\.2\\.3, \\d{4}-\\d\\d-\\d\\d\\)\\.\nOwners: @acme/payments @carol\n`,
      ),
    );
    expect(annotation("CartTest.pays1")).toMatchObject({
      annotation_level: "notice",
      title: "🔒 quarantined: com.example.cart.CartTest.pays1",
    });
    expect(annotation("LoginTest.logsOut")?.title).toMatch(/^🆕 new/);
  }, 120_000);

  it("a passing run's check run is a success without annotations", async () => {
    const run = await runCheckout(
      ["--github-checks"],
      agentReports([{ classname: "com.example.cart.CartTest", name: "pays0", status: "passed" }], "passed"),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(github.invalid).toEqual([]);
    const updates = github.called("checks/update");
    expect(updates).toHaveLength(1);
    expect(updates[0]?.body).toMatchObject({ status: "completed", conclusion: "success" });
    expect((updates[0]?.body?.output as { annotations?: unknown } | undefined)?.annotations).toBeUndefined();
  }, 120_000);

  it("a token GitHub refuses (403) is a warning naming the permission; the exit code stays the run's", async () => {
    github
      .refuse("checks/create", 403)
      .refuse("issues/create-comment", 403)
      .refuse("issues/list-comments", 403);
    const run = await runCheckout(
      ["--github-checks", "--github-comment"],
      agentReports([{ classname: "com.example.cart.CartTest", name: "pays0", status: "passed" }], "passed"),
    );
    expect(run.code, run.stderr).toBe(0);
    expect(run.stderr).toMatch(
      /^warning: GitHub refused to create a check run for ex_\w+ \(403 Resource not accessible by integration.*\): the token needs the checks: write permission/m,
    );
    expect(run.stderr).toMatch(
      /^warning: GitHub refused to write the comment on pull request #7 \(403 .*\): the token needs the pull-requests: write permission/m,
    );
    expect(github.called("checks/update")).toHaveLength(0);
    expect(run.stderr).toContain("All executions passed.");
  }, 120_000);

  it("refuses the flags without --wait or without GitHub's variables (exit 2, nothing triggered)", async () => {
    const noWait = await cli(
      ["run", "--app", "com.example.basic", "--version", "1.2.3", "--plan", "checkout", "--github-checks"],
      {
        env: githubEnv(),
      },
    );
    expect(noWait.code).toBe(2);
    expect(noWait.stderr).toContain("--github-checks needs --wait");
    const noToken = await cli(
      [
        "run",
        "--app",
        "com.example.basic",
        "--version",
        "1.2.3",
        "--plan",
        "checkout",
        "--wait",
        "--github-comment",
      ],
      {
        env: { ...githubEnv(), GITHUB_TOKEN: "" },
      },
    );
    expect(noToken.code).toBe(2);
    expect(noToken.stderr).toContain("--github-comment needs GITHUB_TOKEN");
    expect(github.requests).toHaveLength(0);
  });

  it("the stand-in holds requests to GitHub's description: an unknown path is 404, a body missing head_sha 422", async () => {
    const headers = { authorization: "token x", "content-type": "application/json" };
    const unknown = await fetch(`${github.url}/repos/acme/shop/check-runz`, {
      method: "POST",
      headers,
      body: "{}",
    });
    expect(unknown.status).toBe(404);
    const invalid = await fetch(`${github.url}/repos/acme/shop/check-runs`, {
      method: "POST",
      headers,
      body: JSON.stringify({ name: "x", output: { title: "t", summary: "s", annotations: [{ path: "a" }] } }),
    });
    expect(invalid.status).toBe(422);
    expect(github.invalid).toEqual([
      "POST /repos/acme/shop/check-runz: no such operation in GitHub's OpenAPI description",
      expect.stringMatching(/^checks\/create: .*head_sha/),
    ]);
  });
});
