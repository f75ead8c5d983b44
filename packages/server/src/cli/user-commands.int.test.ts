// The admin commands for the people who sign in to the dashboard, run in the tests' process
// (cli/run-server-cli.ts) as the bin runs them: exit codes, output, what is stored, and signing in to a
// running server with what `user create` printed.
import { beforeAll, describe, expect, it } from "vitest";
import {
  createStore,
  runCli,
  signIn,
  startInProcess,
  useCliSuite,
  type Workspace,
} from "../../test/cli-harness.ts";
import { openDatabase } from "../db/kysely.ts";

useCliSuite();

describe("testbay-server user create", () => {
  let ws: Workspace;
  beforeAll(async () => {
    ws = await createStore();
    expect((await runCli(["org", "create", "default"], ws.env)).code).toBe(0);
    expect((await runCli(["org", "create", "widgets"], ws.env)).code).toBe(0);
  });

  it("prints {email, role, org, password}; the person signs in with it, and only a scrypt hash is stored", async () => {
    const result = await runCli(
      ["user", "create", "--email", "Ann@Example.com", "--role", "member", "--org", "widgets"],
      ws.env,
    );
    expect(result.code, result.stderr).toBe(0);
    const issued = JSON.parse(result.stdout);
    expect(issued).toEqual({
      email: "Ann@Example.com",
      role: "member",
      org: "widgets",
      password: expect.any(String),
    });
    expect(issued.password.length).toBeGreaterThanOrEqual(20);

    const handle = openDatabase(ws.database.url);
    try {
      const row = await handle.db
        .selectFrom("users")
        .select("password_hash")
        .where("email_folded", "=", "ann@example.com")
        .executeTakeFirstOrThrow();
      expect(row.password_hash).toMatch(/^scrypt\$/);
      expect(row.password_hash).not.toContain(issued.password);
    } finally {
      await handle.close();
    }

    // The same email in other capitals is the same person of the organization: refused.
    const again = await runCli(
      ["user", "create", "--email", "ann@example.COM", "--role", "viewer", "--org", "widgets"],
      ws.env,
    );
    expect(again.code).toBe(1);
    expect(again.stderr).toContain("exists already");

    const server = await startInProcess(ws.env);
    const origin = new URL(server.url).origin;
    // Emails are case-insensitive at sign-in too.
    const login = await signIn(origin, "ann@example.com", issued.password);
    expect(login.status, JSON.stringify(login.body)).toBe(200);
    expect(login.body.user).toEqual({ email: "Ann@Example.com", role: "member", org: "widgets" });
    expect(login.headers.get("set-cookie")).toMatch(
      /^testbay_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/,
    );

    const list = await runCli(["user", "list", "--json"], ws.env);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout)).toEqual([
      {
        email: "Ann@Example.com",
        org: "widgets",
        role: "member",
        created_at: expect.any(String),
        disabled_at: null,
      },
    ]);
    expect(list.stdout).not.toContain(issued.password);
  });

  it("puts people in organization default unless told, and refuses unknown roles and organizations", async () => {
    const created = await runCli(
      ["user", "create", "--email", "bob@example.com", "--role", "viewer"],
      ws.env,
    );
    expect(created.code, created.stderr).toBe(0);
    expect(JSON.parse(created.stdout)).toMatchObject({ org: "default", role: "viewer" });

    const role = await runCli(["user", "create", "--email", "c@example.com", "--role", "ci"], ws.env);
    expect(role.code).toBeGreaterThan(0);
    expect(role.stderr).toContain("viewer, member, admin");

    const org = await runCli(
      ["user", "create", "--email", "c@example.com", "--role", "viewer", "--org", "nowhere"],
      ws.env,
    );
    expect(org.code).toBe(1);
    expect(org.stderr).toContain("testbay-server org create nowhere");
  });

  it("gives an email an account in each organization; disable and enable then need --org, and only then", async () => {
    const elsewhere = await runCli(
      ["user", "create", "--email", "ANN@example.com", "--role", "admin", "--org", "default"],
      ws.env,
    );
    expect(elsewhere.code, elsewhere.stderr).toBe(0);
    expect(JSON.parse(elsewhere.stdout)).toMatchObject({ email: "ANN@example.com", org: "default" });

    const which = await runCli(["user", "disable", "ann@example.com"], ws.env);
    expect(which.code).toBe(2);
    expect(which.stderr).toContain(
      "ann@example.com has an account in each of the organizations default, widgets; say which with --org NAME",
    );
    const disabled = await runCli(["user", "disable", "ann@example.com", "--org", "default"], ws.env);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stderr).toContain("ann@example.com is disabled and signed out.");
    const list = await runCli(["user", "list", "--json"], ws.env);
    const anns = JSON.parse(list.stdout).filter(
      (row: { email: string }) => row.email.toLowerCase() === "ann@example.com",
    );
    expect(
      anns.map((row: { org: string; disabled_at: string | null }) => [row.org, row.disabled_at !== null]),
    ).toEqual([
      ["default", true],
      ["widgets", false],
    ]);
    const enabled = await runCli(["user", "enable", "ANN@example.com", "--org", "default"], ws.env);
    expect(enabled.code, enabled.stderr).toBe(0);
    expect(enabled.stderr).toContain("ANN@example.com is enabled.");
    // One account: no --org needed; a wrong one is named.
    expect((await runCli(["user", "disable", "bob@example.com"], ws.env)).code).toBe(0);
    const wrongOrg = await runCli(["user", "enable", "bob@example.com", "--org", "widgets"], ws.env);
    expect(wrongOrg.code).toBe(1);
    expect(wrongOrg.stderr).toContain("No person has email bob@example.com in organization widgets");
  });
});
