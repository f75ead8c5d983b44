import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";

/**
 * Admins manage their organization's people over HTTP (the dashboard's Settings): list, add with a generated
 * password shown once, change roles, disable and enable; with an admin client's token or signed in as an
 * admin. Others are refused; another organization's people do not exist for them; nobody locks themself out.
 */

let server: TestServer;
let adminToken: Record<string, string>;
let adminClientId: string;
let ciToken: Record<string, string>;
interface Session {
  cookie: string;
  csrf: string;
}
const sessions: Record<"viewer" | "member" | "admin", Session> = {} as never;

async function signIn(email: string, password: string) {
  return call(`${server.origin}/auth/login`, { json: { email, password } });
}

async function session(email: string, password: string): Promise<Session> {
  const response = await signIn(email, password);
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return {
    cookie: (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
    csrf: response.body.csrf_token,
  };
}

/** A request as the dashboard makes it: cookie, CSRF token and its own Origin. */
const asPerson = (who: Session, method: string, path: string, json?: unknown) =>
  call(`${server.origin}${path}`, {
    method,
    headers: { cookie: who.cookie, "x-csrf-token": who.csrf, origin: server.origin },
    ...(json === undefined ? {} : { json }),
  });

const asClient = (headers: Record<string, string>, method: string, path: string, json?: unknown) =>
  call(`${server.origin}${path}`, { method, headers, ...(json === undefined ? {} : { json }) });

const userPath = (email: string) => `/v1/users/${encodeURIComponent(email)}`;

async function auditLines() {
  const page = await call(`${server.baseUrl}/audit?limit=100`, { headers: adminToken });
  expect(page.status).toBe(200);
  return (
    page.body.items as Array<{ actor: { type: string; id: string }; action: string; target: { id: string } }>
  ).map((e) => `${e.actor.type}:${e.actor.id} ${e.action} ${e.target.id}`);
}

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  const admin = await server.createClient("acme", "admin");
  adminClientId = admin.client_id;
  adminToken = { "x-api-key": await server.token(admin) };
  ciToken = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  await server.createClient("globex", "ci");
  await server.app.services.people.createUser({ email: "zed@globex.example", role: "member", org: "globex" });
  for (const role of ["viewer", "member", "admin"] as const) {
    const account = await server.app.services.people.createUser({
      email: `${role}@acme.example`,
      role,
      org: "acme",
    });
    sessions[role] = await session(account.email, account.password);
  }
});
afterAll(() => server.close());

describe("GET /v1/users", () => {
  it("lists the organization's people, never a password or its hash", async () => {
    for (const list of [
      await call(`${server.baseUrl}/users`, { headers: adminToken }),
      await call(`${server.baseUrl}/users`, { headers: { cookie: sessions.admin.cookie } }),
    ]) {
      expect(list.status).toBe(200);
      expect(list.body.items.map((u: { email: string }) => u.email)).toEqual([
        "admin@acme.example",
        "member@acme.example",
        "viewer@acme.example",
      ]);
      expect(list.body.items[1]).toEqual({
        email: "member@acme.example",
        role: "member",
        org: "acme",
        created_at: expect.any(String),
        disabled_at: null,
        // Signed in when this file began.
        last_sign_in_at: expect.any(String),
      });
      expect(JSON.stringify(list.body)).not.toContain("scrypt");
    }
  });
});

describe("POST /v1/users", () => {
  it("adds a person with a generated password shown once, which signs them in", async () => {
    const created = await asPerson(sessions.admin, "POST", "/v1/users", {
      email: "Nia@acme.example",
      role: "member",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({
      email: "Nia@acme.example",
      role: "member",
      org: "acme",
      password: expect.any(String),
    });
    expect(created.headers.get("cache-control")).toBe("no-store");
    const lastSignInOfNia = async () =>
      (await call(`${server.baseUrl}/users`, { headers: adminToken })).body.items.find(
        (u: { email: string }) => u.email === "Nia@acme.example",
      ).last_sign_in_at;
    expect(await lastSignInOfNia()).toBeNull();
    server.clock.advance(60_000);
    const signedIn = await signIn("nia@acme.example", created.body.password);
    expect(await lastSignInOfNia()).toBe(new Date(server.clock.now()).toISOString());
    expect(signedIn.status).toBe(200);
    expect(signedIn.body.user).toEqual({ email: "Nia@acme.example", role: "member", org: "acme" });
    const list = await call(`${server.baseUrl}/users`, { headers: adminToken });
    expect(JSON.stringify(list.body)).not.toContain(created.body.password);
    expect(server.logs.join("\n")).not.toContain(created.body.password);
    expect(await auditLines()).toContain("person:admin@acme.example user.created Nia@acme.example");
  });

  it("refuses an email its organization has already, whatever its case, naming it as such", async () => {
    const taken = await asClient(adminToken, "POST", "/v1/users", {
      email: "VIEWER@acme.example",
      role: "viewer",
    });
    expect(taken.status).toBe(409);
    expect(taken.body.code).toBe("user_exists");
    expect(taken.body.fix).toContain("PATCH /v1/users/");
  });

  it("gives an email with an account in another organization a separate one here, and does not tell (API.md §10)", async () => {
    const people = server.app.services.people;
    const { password: globexPassword } = await people.createUser({
      email: "yan@globex.example",
      role: "member",
      org: "globex",
    });
    const created = await asClient(adminToken, "POST", "/v1/users", {
      email: "YAN@globex.example",
      role: "viewer",
    });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({
      email: "YAN@globex.example",
      role: "viewer",
      org: "acme",
      password: expect.any(String),
    });
    expect(created.body.password).not.toBe(globexPassword);
    expect(JSON.stringify(created.body)).not.toContain('"globex"');
    // Each account signs in to its own organization with its own password.
    const acme = await signIn("yan@globex.example", created.body.password);
    expect(acme.status).toBe(200);
    expect(acme.body.user).toEqual({ email: "YAN@globex.example", role: "viewer", org: "acme" });
    const globex = await signIn("yan@globex.example", globexPassword);
    expect(globex.status).toBe(200);
    expect(globex.body.user).toEqual({ email: "yan@globex.example", role: "member", org: "globex" });
    // The other organization's account is untouched, and its people are still not acme's to see.
    const globexPeople = await people.listUsers("globex");
    expect(globexPeople.map((u) => [u.email, u.role, u.disabledAt])).toContainEqual([
      "yan@globex.example",
      "member",
      null,
    ]);
    const acmePeople = await asClient(adminToken, "GET", "/v1/users");
    expect(acmePeople.body.items).toContainEqual(
      expect.objectContaining({ email: "YAN@globex.example", org: "acme" }),
    );
    expect(JSON.stringify(acmePeople.body)).not.toContain('"globex"');
    const again = await asClient(adminToken, "POST", "/v1/users", {
      email: "yan@GLOBEX.example",
      role: "admin",
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe("user_exists");
  });

  it("says at the field what is wrong", async () => {
    const notEmail = await asClient(adminToken, "POST", "/v1/users", { email: "nia", role: "member" });
    expect(notEmail.status).toBe(400);
    expect(notEmail.body.errors).toEqual([
      { path: "/email", in: "body", message: "is not an email address (name@domain)" },
    ]);
    const badRole = await asClient(adminToken, "POST", "/v1/users", { email: "a@b.c", role: "owner" });
    expect(badRole.status).toBe(400);
    expect(badRole.body.errors.map((e: { path: string }) => e.path)).toContain("/role");
    const missing = await asClient(adminToken, "POST", "/v1/users", { role: "member" });
    expect(missing.body.errors).toContainEqual({ path: "/email", in: "body", message: "is required" });
  });
});

describe("PATCH /v1/users/{email}", () => {
  it("changes a role, applied to the person's next request, and audits it", async () => {
    const added = (
      await asClient(adminToken, "POST", "/v1/users", { email: "ola@acme.example", role: "viewer" })
    ).body;
    const ola = await session(added.email, added.password);
    const plan = { name: "p", package_name: "com.example.none", steps: [{ type: "inspect" }] };
    expect((await asPerson(ola, "POST", "/v1/testplans", plan)).status).toBe(403);

    // Events of one millisecond have no order among themselves: the change happens a second later.
    server.clock.advance(1000);
    const changed = await asPerson(sessions.admin, "PATCH", userPath("OLA@acme.example"), { role: "member" });
    expect(changed.status, JSON.stringify(changed.body)).toBe(200);
    expect(changed.body).toMatchObject({ email: "ola@acme.example", role: "member", disabled_at: null });
    // A member may now: the request gets past the role check to the app that does not exist.
    const asMember = await asPerson(ola, "POST", "/v1/testplans", plan);
    expect(asMember.status).not.toBe(403);

    const events = await call(`${server.baseUrl}/audit?limit=5`, { headers: adminToken });
    expect(events.body.items[0]).toMatchObject({
      actor: { type: "person", id: "admin@acme.example" },
      action: "user.role_changed",
      target: { type: "user", id: "ola@acme.example" },
      details: { role: "member", previous_role: "viewer" },
    });
  });

  it("disables (signing the person out everywhere) and enables, audited with the caller", async () => {
    const added = (
      await asClient(adminToken, "POST", "/v1/users", { email: "pia@acme.example", role: "member" })
    ).body;
    const pia = await session(added.email, added.password);
    const disabled = await asClient(adminToken, "PATCH", userPath("pia@acme.example"), { disabled: true });
    expect(disabled.status).toBe(200);
    expect(disabled.body.disabled_at).toEqual(expect.any(String));
    expect((await call(`${server.baseUrl}/me`, { headers: { cookie: pia.cookie } })).status).toBe(401);
    expect((await signIn(added.email, added.password)).status).toBe(403);

    const enabled = await asPerson(sessions.admin, "PATCH", userPath("pia@acme.example"), {
      disabled: false,
    });
    expect(enabled.status).toBe(200);
    expect(enabled.body.disabled_at).toBeNull();
    expect((await signIn(added.email, added.password)).status).toBe(200);

    const lines = await auditLines();
    expect(lines).toContain(`client:${adminClientId} user.disabled pia@acme.example`);
    expect(lines).toContain("person:admin@acme.example user.enabled pia@acme.example");
  });

  it("refuses an admin lowering their own role or disabling themself, with a fix", async () => {
    const demote = await asPerson(sessions.admin, "PATCH", userPath("admin@acme.example"), {
      role: "member",
    });
    expect(demote.status).toBe(409);
    expect(demote.body).toMatchObject({ code: "self_lockout", reason: "own_role" });
    expect(demote.body.fix).toContain("another administrator");
    const disable = await asPerson(sessions.admin, "PATCH", userPath("admin@acme.example"), {
      disabled: true,
    });
    expect(disable.status).toBe(409);
    expect(disable.body).toMatchObject({ code: "self_lockout", reason: "own_account" });
    // Nothing changed: still an admin, still signed in.
    const list = await asPerson(sessions.admin, "GET", "/v1/users");
    expect(list.status).toBe(200);
    expect(list.body.items[0]).toMatchObject({
      email: "admin@acme.example",
      role: "admin",
      disabled_at: null,
    });
    // Setting the role one has is no change, and allowed.
    expect(
      (await asPerson(sessions.admin, "PATCH", userPath("admin@acme.example"), { role: "admin" })).status,
    ).toBe(200);
  });

  it("answers 404 for another organization's person, as for an unknown one", async () => {
    for (const email of ["zed@globex.example", "nobody@acme.example"]) {
      const response = await asClient(adminToken, "PATCH", userPath(email), { disabled: true });
      expect(response.status).toBe(404);
      expect(response.body.code).toBe("user_not_found");
    }
    expect((await signIn("zed@globex.example", "x")).status).toBe(401);
    const [zed] = await server.app.services.people.listUsers("globex");
    expect(zed?.disabledAt).toBeNull();
  });
});

describe("who may", () => {
  it("refuses ci clients, viewers and members with 403, changing nothing", async () => {
    const calls = [
      ["GET", "/v1/users", undefined],
      ["POST", "/v1/users", { email: "x@acme.example", role: "admin" }],
      ["PATCH", userPath("viewer@acme.example"), { role: "admin" }],
    ] as const;
    for (const [method, path, body] of calls) {
      expect((await asClient(ciToken, method, path, body)).status, `ci ${method} ${path}`).toBe(403);
      for (const role of ["viewer", "member"] as const) {
        const refused = await asPerson(sessions[role], method, path, body);
        expect(refused.status, `${role} ${method} ${path}`).toBe(403);
        expect(refused.body).toMatchObject({ code: "forbidden", reason: "role" });
      }
    }
    const list = await call(`${server.baseUrl}/users`, { headers: adminToken });
    expect(list.body.items.map((u: { email: string }) => u.email)).not.toContain("x@acme.example");
    expect(list.body.items.find((u: { email: string }) => u.email === "viewer@acme.example").role).toBe(
      "viewer",
    );
  });

  it("refuses a person's change without the CSRF token", async () => {
    const withoutCsrf = await call(`${server.origin}${userPath("viewer@acme.example")}`, {
      method: "PATCH",
      headers: { cookie: sessions.admin.cookie, origin: server.origin },
      json: { role: "admin" },
    });
    expect(withoutCsrf.status).toBe(403);
    expect(withoutCsrf.body).toMatchObject({ code: "forbidden", reason: "csrf" });
  });
});
