import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";
import { signInSlowedDown } from "./sign-in-slowdown.fixture.ts";

/**
 * People signing in (API.md §10) against a real server: sessions kept in the database (so, in the scaled
 * project, one instance starts a session and the other honours or ends it), cookie-authenticated /v1 calls
 * with roles and CSRF, and the sign-in limits.
 */

let server: TestServer;
let ci: Record<string, string>;
const passwords: Record<string, string> = {};

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  for (const role of ["viewer", "member", "admin"] as const) {
    const account = await server.app.services.people.createUser({
      email: `${role}@acme.example`,
      role,
      org: "acme",
    });
    passwords[role] = account.password;
  }
  await registerBasicApp(server, ci);
});
afterAll(() => server.close());

interface Session {
  /** `testbay_session=…`, as a browser sends it back. */
  cookie: string;
  csrf: string;
}

async function signIn(email: string, password: string): Promise<Session> {
  const response = await call(`${server.origin}/auth/login`, { json: { email, password } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  const setCookie = response.headers.get("set-cookie") ?? "";
  return { cookie: setCookie.split(";")[0] ?? "", csrf: response.body.csrf_token };
}

const signInAs = (role: "viewer" | "member" | "admin") =>
  signIn(`${role}@acme.example`, passwords[role] ?? "");

/** A change as the dashboard makes it: cookie, CSRF token and its own Origin. */
function change(session: Session, method: string, path: string, json?: unknown) {
  return call(`${server.origin}${path}`, {
    method,
    headers: { cookie: session.cookie, "x-csrf-token": session.csrf, origin: server.origin },
    ...(json === undefined ? {} : { json }),
  });
}

const read = (session: Session, path: string) =>
  call(`${server.origin}${path}`, { headers: { cookie: session.cookie } });

const planBody = (name: string) => ({
  name,
  package_name: "com.example.basic",
  steps: [{ type: "inspect", expect: { debuggable: false } }],
});

async function planNames(): Promise<string[]> {
  const { body } = await call(`${server.baseUrl}/testplans`, { headers: ci });
  return body.items.map((plan: { name: string }) => plan.name);
}

describe("signing in", () => {
  it("starts a session: an HttpOnly SameSite=Lax cookie, the person, a CSRF token; /v1 reads with the cookie", async () => {
    const response = await call(`${server.origin}/auth/login`, {
      json: { email: "Viewer@ACME.example", password: passwords.viewer },
    });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      user: { email: "viewer@acme.example", role: "viewer", org: "acme" },
      csrf_token: expect.stringMatching(/^[A-Za-z0-9_-]{43}$/),
    });
    const setCookie = response.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/^testbay_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax$/);
    expect(response.headers.get("cache-control")).toBe("no-store");
    const session = { cookie: setCookie.split(";")[0] ?? "", csrf: response.body.csrf_token };

    const executions = await read(session, "/v1/executions");
    expect(executions.status, JSON.stringify(executions.body)).toBe(200);
    expect(executions.body.items).toEqual([]);
    expect((await read(session, "/v1/testplans")).status).toBe(200);

    expect((await read(session, "/auth/session")).body).toEqual({
      signed_in: true,
      user: { email: "viewer@acme.example", role: "viewer", org: "acme" },
      csrf_token: session.csrf,
    });
    expect((await call(`${server.origin}/auth/session`)).body).toEqual({ signed_in: false });
  });

  it("refuses a wrong password and an unknown email alike: 401 invalid_credentials, no cookie", async () => {
    for (const [email, password] of [
      ["member@acme.example", `${passwords.member}!`],
      ["nobody@acme.example", passwords.member],
    ]) {
      const response = await call(`${server.origin}/auth/login`, { json: { email, password } });
      expect(response.status).toBe(401);
      expect(response.headers.get("content-type")).toContain("application/problem+json");
      expect(response.headers.get("set-cookie")).toBeNull();
      expect(response.body).toMatchObject({
        code: "invalid_credentials",
        detail: "The email or the password is wrong.",
        fix: expect.stringContaining("testbay-server user create"),
      });
    }
  });

  it("without x-api-key and without a live session, /v1 answers 401", async () => {
    const forged = { cookie: `testbay_session=${"A".repeat(43)}`, csrf: "x" };
    const response = await read(forged, "/v1/executions");
    expect(response.status).toBe(401);
    expect(response.body).toMatchObject({ code: "invalid_access_token", reason: "session_expired" });
    expect((await call(`${server.baseUrl}/executions`)).body.reason).toBe("missing");
  });
});

describe("one email in several organizations (an account in each)", () => {
  const login = (json: Record<string, string>) => call(`${server.origin}/auth/login`, { json });

  it("signs each account in to its own organization with its own password; neither sees the other's data", async () => {
    const people = server.app.services.people;
    await server.createClient("globex", "ci");
    const inAcme = await people.createUser({ email: "kim@example.com", role: "viewer", org: "acme" });
    const inGlobex = await people.createUser({ email: "Kim@Example.com", role: "admin", org: "globex" });
    const acme = await login({ email: "kim@example.com", password: inAcme.password });
    expect(acme.status).toBe(200);
    expect(acme.body.user).toEqual({ email: "kim@example.com", role: "viewer", org: "acme" });
    const globex = await login({ email: "kim@example.com", password: inGlobex.password });
    expect(globex.status).toBe(200);
    expect(globex.body.user).toEqual({ email: "Kim@Example.com", role: "admin", org: "globex" });
    // A password opens only its own account, whatever org says.
    const crossed = await login({ email: "kim@example.com", password: inAcme.password, org: "globex" });
    expect(crossed.status).toBe(401);
    expect(crossed.headers.get("set-cookie")).toBeNull();

    const cookieOf = (response: typeof acme) => ({
      cookie: (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
      csrf: response.body.csrf_token,
    });
    const acmeApps = await read(cookieOf(acme), "/v1/apps");
    expect(acmeApps.status).toBe(200);
    expect(acmeApps.body.items.map((app: { package_name: string }) => app.package_name)).toContain(
      "com.example.basic",
    );
    const globexApps = await read(cookieOf(globex), "/v1/apps");
    expect(globexApps.status).toBe(200);
    expect(globexApps.body.items).toEqual([]);
    const globexUsers = await read(cookieOf(globex), "/v1/users");
    expect(globexUsers.body.items.map((user: { email: string }) => user.email)).toEqual(["Kim@Example.com"]);
  });

  it("asks which organization when one password opens accounts in several (409 organization_required), then signs in to the one named", async () => {
    const people = server.app.services.people;
    const inAcme = await people.createUser({ email: "lou@example.com", role: "member", org: "acme" });
    const inGlobex = await people.createUser({ email: "lou@example.com", role: "viewer", org: "globex" });
    // Lou gives their globex account the password of their acme account.
    const globexSession = await signIn("lou@example.com", inGlobex.password);
    const changed = await change(globexSession, "POST", "/auth/password", {
      current_password: inGlobex.password,
      new_password: inAcme.password,
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(204);

    const ambiguous = await login({ email: "LOU@example.com", password: inAcme.password });
    expect(ambiguous.status).toBe(409);
    expect(ambiguous.headers.get("set-cookie")).toBeNull();
    expect(ambiguous.body).toMatchObject({
      code: "organization_required",
      organizations: ["acme", "globex"],
      detail: expect.stringContaining("acme, globex"),
      fix: expect.stringContaining('"org": "acme"'),
    });
    for (const [org, role] of [
      ["globex", "viewer"],
      ["acme", "member"],
    ] as const) {
      const chosen = await login({ email: "lou@example.com", password: inAcme.password, org });
      expect(chosen.status, org).toBe(200);
      expect(chosen.body.user).toEqual({ email: "lou@example.com", role, org });
    }
    const unknownOrg = await login({ email: "lou@example.com", password: inAcme.password, org: "nowhere" });
    expect(unknownOrg.status).toBe(401);
    expect(unknownOrg.body.code).toBe("invalid_credentials");

    // Disabled in one organization: the password signs in to the other without asking.
    await people.disableUser("lou@example.com", undefined, "globex");
    const one = await login({ email: "lou@example.com", password: inAcme.password });
    expect(one.status).toBe(200);
    expect(one.body.user.org).toBe("acme");
    const disabled = await login({ email: "lou@example.com", password: inAcme.password, org: "globex" });
    expect(disabled.status).toBe(403);
    expect(disabled.body.reason).toBe("account_disabled");
  });

  it("names the account of an admin command by --org only when the email has several", async () => {
    const people = server.app.services.people;
    await expect(people.disableUser("kim@example.com")).rejects.toThrow(
      "kim@example.com has an account in each of the organizations acme, globex; say which with --org NAME",
    );
    await people.disableUser("kim@example.com", undefined, "acme");
    expect(
      (await people.listUsers("acme")).find((u) => u.email === "kim@example.com")?.disabledAt,
    ).not.toBeNull();
    expect(
      (await people.listUsers("globex")).find((u) => u.email === "Kim@Example.com")?.disabledAt,
    ).toBeNull();
    await people.enableUser("kim@example.com", undefined, "acme");
    // One account: no --org needed.
    await people.disableUser("viewer@acme.example");
    await people.enableUser("viewer@acme.example");
  });
});

describe("roles", () => {
  it("a viewer reads but may not create a plan: 403 naming the member role", async () => {
    const viewer = await signInAs("viewer");
    const response = await change(viewer, "POST", "/v1/testplans", planBody("by a viewer"));
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: "forbidden", reason: "role" });
    expect(response.body.fix).toContain("member role");
    expect(await planNames()).not.toContain("by a viewer");
  });

  it("a member creates a plan, triggers it and cancels the run, recorded as the person", async () => {
    const member = await signInAs("member");
    const created = await change(member, "POST", "/v1/testplans", planBody("by a member"));
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    const triggered = await change(member, "POST", "/v1/testplan/run", {
      package_name: "com.example.basic",
      version: "1.2.3",
      test_plan_id: created.body.id,
    });
    expect(triggered.status, JSON.stringify(triggered.body)).toBe(200);
    const execution = triggered.body.execution;
    expect(execution.triggered_by).toEqual({ type: "person", id: "member@acme.example", name: null });
    // Read back, the run still names the person (the execution keeps their user ID; the email is looked up).
    expect((await read(member, `/v1/executions/${execution.id}`)).body.triggered_by).toEqual({
      type: "person",
      id: "member@acme.example",
      name: null,
    });
    const cancelled = await change(member, "POST", `/v1/executions/${execution.id}/cancel`);
    expect(cancelled.status, JSON.stringify(cancelled.body)).toBe(200);
    // A member is no admin: clients are not theirs to see.
    const clients = await read(member, "/v1/clients");
    expect(clients.status).toBe(403);
    expect(clients.body.fix).toContain("admin role");
  });

  it("an admin manages clients; nobody signed in may speak the agent protocol", async () => {
    const admin = await signInAs("admin");
    const clients = await read(admin, "/v1/clients");
    expect(clients.status).toBe(200);
    expect(clients.body.items.length).toBeGreaterThan(0);
    const claim = await change(admin, "POST", "/v1/agent/claim", { agent_id: "a", devices: [] });
    expect(claim.status).toBe(403);
    expect(claim.body.fix).toContain("agent client credentials");
  });
});

describe("CSRF", () => {
  it("refuses a cross-site form post that carries the cookie, and changes nothing", async () => {
    const member = await signInAs("member");
    const response = await call(`${server.origin}/v1/testplans`, {
      method: "POST",
      headers: {
        cookie: member.cookie,
        origin: "https://evil.example",
        "content-type": "application/x-www-form-urlencoded",
      },
      body: "name=forged&package_name=com.example.basic",
    });
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ code: "forbidden", reason: "csrf" });
    expect(response.body.fix).toContain("x-csrf-token");
    expect(await planNames()).not.toContain("forged");
  });

  it("refuses the right token from a foreign Origin, and a wrong token from our own", async () => {
    const member = await signInAs("member");
    const foreign = await call(`${server.origin}/v1/testplans`, {
      method: "POST",
      headers: { cookie: member.cookie, "x-csrf-token": member.csrf, origin: "https://evil.example" },
      json: planBody("foreign origin"),
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.reason).toBe("csrf");
    const wrong = await change({ ...member, csrf: `${member.csrf.slice(1)}A` }, "POST", "/v1/testplans", {
      ...planBody("wrong token"),
    });
    expect(wrong.status).toBe(403);
    expect(wrong.body.reason).toBe("csrf");
    // Another session's token is no good either.
    const other = await signInAs("member");
    const crossed = await change(
      { ...member, csrf: other.csrf },
      "POST",
      "/v1/testplans",
      planBody("crossed"),
    );
    expect(crossed.body.reason).toBe("csrf");
    // Without an Origin header (some same-origin requests have none) the token alone admits it.
    const noOrigin = await call(`${server.origin}/v1/testplans`, {
      method: "POST",
      headers: { cookie: member.cookie, "x-csrf-token": member.csrf },
      json: planBody("no origin"),
    });
    expect(noOrigin.status).toBe(201);
    expect(await planNames()).not.toContain("foreign origin");
    expect(await planNames()).not.toContain("wrong token");
  });

  it("leaves x-api-key clients alone, cookie, Origin and all", async () => {
    const viewer = await signInAs("viewer");
    const response = await call(`${server.baseUrl}/testplans`, {
      method: "POST",
      headers: { ...ci, cookie: viewer.cookie, origin: "https://evil.example" },
      json: planBody("by the ci client"),
    });
    expect(response.status, JSON.stringify(response.body)).toBe(201);
  });
});

describe("ending sessions", () => {
  it("signing out needs the CSRF token, then ends the session on every instance", async () => {
    const member = await signInAs("member");
    const forged = await call(`${server.origin}/auth/logout`, {
      method: "POST",
      headers: { cookie: member.cookie, origin: "https://evil.example" },
    });
    expect(forged.status).toBe(403);
    expect(forged.body.reason).toBe("csrf");
    expect((await read(member, "/v1/executions")).status).toBe(200);

    const out = await change(member, "POST", "/auth/logout");
    expect(out.status).toBe(204);
    expect(out.headers.get("set-cookie")).toMatch(/^testbay_session=; Max-Age=0;/);
    // Twice, so that in the scaled project both instances are asked.
    for (let i = 0; i < 2; i++) {
      const after = await read(member, "/v1/executions");
      expect(after.status).toBe(401);
      expect(after.body.reason).toBe("session_expired");
    }
    expect((await read(member, "/auth/session")).body).toEqual({ signed_in: false });
  });

  it("ends after 12 hours without use, and each use starts the 12 hours again", async () => {
    const viewer = await signInAs("viewer");
    server.clock.advance(11 * 3600 * 1000);
    expect((await read(viewer, "/v1/executions")).status).toBe(200);
    server.clock.advance(11 * 3600 * 1000);
    expect((await read(viewer, "/v1/executions")).status).toBe(200);
    server.clock.advance(12 * 3600 * 1000 + 1000);
    const expired = await read(viewer, "/v1/executions");
    expect(expired.status).toBe(401);
    expect(expired.body.reason).toBe("session_expired");
  });

  it("disabling a person ends their sessions at once", async () => {
    const account = await server.app.services.people.createUser({
      email: "leaver@acme.example",
      role: "member",
      org: "acme",
    });
    const session = await signIn(account.email, account.password);
    expect((await read(session, "/v1/executions")).status).toBe(200);
    await server.app.services.people.disableUser("LEAVER@acme.example");
    for (let i = 0; i < 2; i++) expect((await read(session, "/v1/executions")).status).toBe(401);
    const again = await call(`${server.origin}/auth/login`, {
      json: { email: account.email, password: account.password },
    });
    expect(again.status).toBe(403);
    expect(again.body.reason).toBe("account_disabled");
    expect(again.headers.get("set-cookie")).toBeNull();
  });

  it("refuses a session whose person is disabled, even while its row remains", async () => {
    const account = await server.app.services.people.createUser({
      email: "flagged@acme.example",
      role: "viewer",
      org: "acme",
    });
    const session = await signIn(account.email, account.password);
    // As a disable written by another tool, or racing a sign-in, would leave it: the flag without the delete.
    await server.app.services.database.db
      .updateTable("users")
      .set({ disabled_at: new Date(server.clock.now()).toISOString() })
      .where("email_folded", "=", "flagged@acme.example")
      .execute();
    expect((await read(session, "/v1/executions")).status).toBe(401);
    expect((await read(session, "/auth/session")).body).toEqual({ signed_in: false });
  });

  it("changing the password checks the old one and the length, and signs the other sessions out", async () => {
    const account = await server.app.services.people.createUser({
      email: "changer@acme.example",
      role: "viewer",
      org: "acme",
    });
    const here = await signIn(account.email, account.password);
    const elsewhere = await signIn(account.email, account.password);
    const short = await change(here, "POST", "/auth/password", {
      current_password: account.password,
      new_password: "too-short",
    });
    expect(short.status).toBe(400);
    expect(short.body.errors).toEqual([
      { path: "/new_password", in: "body", message: "must be at least 12 characters long" },
    ]);
    const wrong = await change(here, "POST", "/auth/password", {
      current_password: "not it at all",
      new_password: "a long enough passphrase",
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.code).toBe("invalid_credentials");
    const noToken = await call(`${server.origin}/auth/password`, {
      headers: { cookie: here.cookie },
      json: { current_password: account.password, new_password: "a long enough passphrase" },
    });
    expect(noToken.status).toBe(403);
    expect(noToken.body.reason).toBe("csrf");

    const changed = await change(here, "POST", "/auth/password", {
      current_password: account.password,
      new_password: "a long enough passphrase",
    });
    expect(changed.status, JSON.stringify(changed.body)).toBe(204);
    expect((await read(here, "/v1/executions")).status).toBe(200);
    expect((await read(elsewhere, "/v1/executions")).status).toBe(401);
    await signIn(account.email, "a long enough passphrase");
    const old = await call(`${server.origin}/auth/login`, {
      json: { email: account.email, password: account.password },
    });
    expect(old.status).toBe(401);
  });
});

// Last: these spend the sign-in failure counts of the test's one address, 127.0.0.1.
describe("sign-in slowdown (API.md §10: slowed down, never refused)", () => {
  it("after 10 failures for an account, its right password still signs in, after a wait; other accounts wait not", async () => {
    server.clock.advance(3600 * 1000);
    const account = await server.app.services.people.createUser({
      email: "target@acme.example",
      role: "viewer",
      org: "acme",
    });
    for (let i = 0; i < 10; i++) {
      const response = await call(`${server.origin}/auth/login`, {
        json: { email: "TARGET@acme.example", password: `guess ${i}` },
      });
      expect(response.status).toBe(401);
    }
    // Where the account used to be locked for 81 s (429 even for the right password): a wait of 1 s.
    const slowed = await signInSlowedDown(server, account.email, account.password);
    expect(slowed.delayMs).toBe(1000);
    expect(slowed.response.status).toBe(200);
    expect(slowed.response.headers.get("set-cookie")).toMatch(/^testbay_session=/);
    // A success resets nothing; each further wrong guess waits longer, and is then answered 401 as usual.
    for (const delayMs of [1000, 2000, 4000]) {
      const guess = await signInSlowedDown(server, account.email, "guess again");
      expect(guess.delayMs).toBe(delayMs);
      expect(guess.response.status).toBe(401);
    }
    // Another account from the same address signs in at once.
    await signInAs("viewer");
  });

  it("after 30 failures from one address, every account from it still signs in, after a wait", async () => {
    server.clock.advance(3600 * 1000);
    for (let i = 0; i < 30; i++) {
      const response = await call(`${server.origin}/auth/login`, {
        json: { email: `guess-${i}@acme.example`, password: "wrong password" },
      });
      expect(response.status).toBe(401);
    }
    for (const role of ["admin", "member"] as const) {
      const slowed = await signInSlowedDown(server, `${role}@acme.example`, passwords[role] ?? "");
      expect(slowed.delayMs).toBe(1000);
      expect(slowed.response.status).toBe(200);
    }
    server.clock.advance(3600 * 1000);
    await signInAs("admin");
  });
});

describe("behind HTTPS (TESTBAY_PUBLIC_URL https://…)", () => {
  let proxied: TestServer;
  beforeAll(async () => {
    proxied = await startTestServer({ env: { TESTBAY_PUBLIC_URL: "https://testbay.example.com/v1" } });
    await proxied.createClient("acme", "ci");
  });
  afterAll(() => proxied.close());

  it("marks the cookie Secure and takes the public origin as the dashboard's own", async () => {
    const account = await proxied.app.services.people.createUser({
      email: "ann@acme.example",
      role: "member",
      org: "acme",
    });
    const login = await call(`${proxied.origin}/auth/login`, {
      json: { email: account.email, password: account.password },
    });
    const setCookie = login.headers.get("set-cookie") ?? "";
    expect(setCookie).toMatch(/; Secure(;|$)/);
    expect(setCookie).toContain("HttpOnly");
    const cookie = setCookie.split(";")[0] ?? "";
    const headers = { cookie, "x-csrf-token": login.body.csrf_token };
    const fromPublic = await call(`${proxied.origin}/auth/logout`, {
      method: "POST",
      headers: { ...headers, origin: "https://testbay.example.com" },
    });
    expect(fromPublic.status).toBe(204);
    expect(fromPublic.headers.get("set-cookie")).toMatch(/; Secure(;|$)/);
  });
});
