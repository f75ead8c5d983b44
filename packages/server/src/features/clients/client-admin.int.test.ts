import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import { triggerOneRun } from "../webhooks/one-run.fixture.ts";

/**
 * Admins manage their organization's clients over HTTP (the dashboard's Settings): with an admin client's
 * token or signed in as an admin person (cookie and CSRF token). Others are refused; another organization's
 * clients do not exist for them; secrets are shown once and work at the token endpoint.
 */

let server: TestServer;
let adminToken: Record<string, string>;
let adminClientId: string;
let ciToken: Record<string, string>;
let otherOrgClientId: string;
interface Session {
  cookie: string;
  csrf: string;
}
const sessions: Record<"viewer" | "member" | "admin", Session> = {} as never;

async function signIn(email: string, password: string): Promise<Session> {
  const response = await call(`${server.origin}/auth/login`, { json: { email, password } });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  return {
    cookie: (response.headers.get("set-cookie") ?? "").split(";")[0] ?? "",
    csrf: response.body.csrf_token,
  };
}

/** A change as the dashboard makes it: cookie, CSRF token and its own Origin. */
const asPerson = (session: Session, path: string, json?: unknown) =>
  call(`${server.origin}${path}`, {
    method: "POST",
    headers: { cookie: session.cookie, "x-csrf-token": session.csrf, origin: server.origin },
    ...(json === undefined ? {} : { json }),
  });

const asClient = (headers: Record<string, string>, path: string, json?: unknown) =>
  call(`${server.origin}${path}`, { method: "POST", headers, ...(json === undefined ? {} : { json }) });

/** POST /v1/oauth/token with a client's ID and secret: the status, and the token when it worked. */
async function tokenFor(clientId: string, secret: string) {
  const response = await call(`${server.baseUrl}/oauth/token`, {
    json: { client_id: clientId, client_secret: secret, audience: server.config.audience },
  });
  return { status: response.status, token: response.body.access_token as string | undefined };
}

const me = (token: string) => call(`${server.baseUrl}/me`, { headers: { "x-api-key": token } });

/** Tokens carry their issue time in whole seconds: a step of a second keeps "before" and "after" apart. */
const tick = () => server.clock.advance(1000);

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
  otherOrgClientId = (await server.createClient("globex", "ci")).client_id;
  for (const role of ["viewer", "member", "admin"] as const) {
    const account = await server.app.services.people.createUser({
      email: `${role}@acme.example`,
      role,
      org: "acme",
    });
    sessions[role] = await signIn(account.email, account.password);
  }
  tick();
});
afterAll(() => server.close());

describe("POST /v1/clients", () => {
  it("creates a client whose secret is shown once and works at the token endpoint", async () => {
    const created = await asPerson(sessions.admin, "/v1/clients", { role: "ci" });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toEqual({
      client_id: expect.stringMatching(/^cl_/),
      client_secret: expect.stringMatching(/^tbs_/),
      org: "acme",
      role: "ci",
      name: null,
    });
    expect(created.headers.get("cache-control")).toBe("no-store");
    expect(created.headers.get("location")).toBe(`/v1/clients/${created.body.client_id}`);

    const { status, token } = await tokenFor(created.body.client_id, created.body.client_secret);
    expect(status).toBe(200);
    expect((await me(token ?? "")).body).toMatchObject({ client_id: created.body.client_id, role: "ci" });

    // No later read shows the secret again, nor its hash.
    const one = await call(`${server.baseUrl}/clients/${created.body.client_id}`, { headers: adminToken });
    const all = await call(`${server.baseUrl}/clients`, { headers: adminToken });
    for (const read of [one, all]) {
      expect(read.status).toBe(200);
      expect(JSON.stringify(read.body)).not.toContain(created.body.client_secret);
      expect(JSON.stringify(read.body)).not.toContain("scrypt");
    }
    expect(one.body).toEqual({
      client_id: created.body.client_id,
      name: null,
      role: "ci",
      org: "acme",
      created_at: expect.any(String),
      disabled_at: null,
      all_orgs: false,
    });
    // The secret is never logged either.
    expect(server.logs.join("\n")).not.toContain(created.body.client_secret);
  });

  it("is open to an admin client too, and audited with whoever created the client", async () => {
    const created = await asClient(adminToken, "/v1/clients", { role: "agent" });
    expect(created.status).toBe(201);
    expect(created.body.role).toBe("agent");
    expect(await auditLines()).toContain(`client:${adminClientId} client.created ${created.body.client_id}`);
    const byPerson = await asPerson(sessions.admin, "/v1/clients", { role: "admin" });
    expect(await auditLines()).toContain(
      `person:admin@acme.example client.created ${byPerson.body.client_id}`,
    );
  });

  it("says at the field what is wrong with the body", async () => {
    const unknownRole = await asClient(adminToken, "/v1/clients", { role: "owner" });
    expect(unknownRole.status).toBe(400);
    expect(unknownRole.body.code).toBe("invalid_request");
    expect(unknownRole.body.errors.map((e: { path: string }) => e.path)).toContain("/role");
    const missing = await asClient(adminToken, "/v1/clients", {});
    expect(missing.status).toBe(400);
    expect(missing.body.errors).toContainEqual({ path: "/role", in: "body", message: "is required" });
  });
});

describe("client names", () => {
  it("are kept trimmed and shown wherever the client is: creation, rotation, GET, the list", async () => {
    const created = await asPerson(sessions.admin, "/v1/clients", { role: "ci", name: "  Nightly CI ✓ " });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ role: "ci", name: "Nightly CI ✓" });
    const id = created.body.client_id;
    const rotated = await asClient(adminToken, `/v1/clients/${id}/rotate`);
    expect(rotated.body.name).toBe("Nightly CI ✓");
    expect((await call(`${server.baseUrl}/clients/${id}`, { headers: adminToken })).body.name).toBe(
      "Nightly CI ✓",
    );
    const all = await call(`${server.baseUrl}/clients`, { headers: adminToken });
    expect(all.body.items).toContainEqual(expect.objectContaining({ client_id: id, name: "Nightly CI ✓" }));
    // null is the same as leaving it out; 100 characters (not UTF-16 units) are allowed.
    const unnamed = await asClient(adminToken, "/v1/clients", { role: "agent", name: null });
    expect(unnamed.body.name).toBeNull();
    const longest = await asClient(adminToken, "/v1/clients", { role: "agent", name: "😀".repeat(100) });
    expect(longest.status).toBe(201);
  });

  it.each([
    ["an empty name", "", "is empty"],
    ["a blank name", "   ", "is empty"],
    ["101 characters", "x".repeat(101), "101 characters long"],
    ["a line break", "nightly\nCI", "line break"],
    ["a tab", "nightly\tCI", "control character"],
  ])("refuses %s with 400 and a fix that says what a name may be", async (_what, name, problem) => {
    const before = (await call(`${server.baseUrl}/clients`, { headers: adminToken })).body.items.length;
    const refused = await asClient(adminToken, "/v1/clients", { role: "ci", name });
    expect(refused.status, JSON.stringify(refused.body)).toBe(400);
    expect(refused.body).toMatchObject({ code: "invalid_request" });
    expect(refused.body.detail).toContain(problem);
    expect(refused.body.fix).toContain("1–100 printable characters");
    expect(refused.body.errors).toEqual([{ path: "/name", in: "body", message: expect.any(String) }]);
    expect((await call(`${server.baseUrl}/clients`, { headers: adminToken })).body.items).toHaveLength(
      before,
    );
  });

  it("name the client that triggered a run in the execution's triggered_by (null for a client without one)", async () => {
    const named = (await asClient(adminToken, "/v1/clients", { role: "ci", name: "release pipeline" })).body;
    const namedToken = { "x-api-key": (await tokenFor(named.client_id, named.client_secret)).token ?? "" };
    const executionId = await triggerOneRun(server, namedToken);
    const execution = await call(`${server.baseUrl}/executions/${executionId}`, { headers: ciToken });
    expect(execution.body.triggered_by).toEqual({
      type: "client",
      id: named.client_id,
      name: "release pipeline",
    });
    const listed = await call(`${server.baseUrl}/executions?limit=100`, { headers: ciToken });
    const item = listed.body.items.find((e: { id: string }) => e.id === executionId);
    expect(item.triggered_by.name).toBe("release pipeline");

    // The unnamed ci client: its runs say null, next to the named one's in the same page.
    const plan = execution.body.test_plan_id;
    const again = await call(`${server.baseUrl}/testplan/run`, {
      headers: ciToken,
      json: { test_plan_id: plan, package_name: "com.example.basic", version: "1.2.3" },
    });
    expect(again.status).toBe(200);
    expect(again.body.execution.triggered_by).toEqual({ type: "client", id: expect.any(String), name: null });
    const page = await call(`${server.baseUrl}/executions?limit=100`, { headers: ciToken });
    const names = page.body.items.map((e: { triggered_by: { name: string | null } }) => e.triggered_by.name);
    expect(names).toEqual(expect.arrayContaining(["release pipeline", null]));
  });
});

describe("disable, enable, rotate", () => {
  it("rotating gives a new secret once: the old secret and the tokens issued with it stop working", async () => {
    const created = (await asClient(adminToken, "/v1/clients", { role: "ci" })).body;
    const before = (await tokenFor(created.client_id, created.client_secret)).token ?? "";
    tick();
    const rotated = await asPerson(sessions.admin, `/v1/clients/${created.client_id}/rotate`);
    expect(rotated.status, JSON.stringify(rotated.body)).toBe(200);
    expect(rotated.headers.get("cache-control")).toBe("no-store");
    expect(rotated.body).toEqual({
      client_id: created.client_id,
      client_secret: expect.stringMatching(/^tbs_/),
      org: "acme",
      role: "ci",
      name: null,
    });
    expect(rotated.body.client_secret).not.toBe(created.client_secret);
    tick();
    expect((await tokenFor(created.client_id, created.client_secret)).status).toBe(401);
    expect((await me(before)).body).toMatchObject({ reason: "token_revoked" });
    const fresh = await tokenFor(created.client_id, rotated.body.client_secret);
    expect(fresh.status).toBe(200);
    expect((await me(fresh.token ?? "")).status).toBe(200);
    expect(await auditLines()).toContain(`person:admin@acme.example client.rotated ${created.client_id}`);
  });

  it("disabling stops the client's tokens at once; enabling lets it get new ones", async () => {
    const created = (await asClient(adminToken, "/v1/clients", { role: "ci" })).body;
    const token = (await tokenFor(created.client_id, created.client_secret)).token ?? "";
    expect((await me(token)).status).toBe(200);

    const disabled = await asPerson(sessions.admin, `/v1/clients/${created.client_id}/disable`);
    expect(disabled.status).toBe(200);
    expect(disabled.body).toMatchObject({ client_id: created.client_id, disabled_at: expect.any(String) });
    expect((await me(token)).body).toMatchObject({ code: "invalid_access_token", reason: "client_disabled" });
    expect((await tokenFor(created.client_id, created.client_secret)).status).toBe(401);
    // Disabling again changes nothing.
    expect((await asClient(adminToken, `/v1/clients/${created.client_id}/disable`)).status).toBe(200);

    tick();
    const enabled = await asClient(adminToken, `/v1/clients/${created.client_id}/enable`);
    expect(enabled.status).toBe(200);
    expect(enabled.body.disabled_at).toBeNull();
    tick();
    expect((await tokenFor(created.client_id, created.client_secret)).status).toBe(200);

    const lines = await auditLines();
    expect(lines).toContain(`person:admin@acme.example client.disabled ${created.client_id}`);
    expect(lines).toContain(`client:${adminClientId} client.enabled ${created.client_id}`);
    expect(lines.filter((line) => line.endsWith(`client.disabled ${created.client_id}`))).toHaveLength(1);
  });

  it("refuses an admin client disabling itself, with what to do instead", async () => {
    const refused = await asClient(adminToken, `/v1/clients/${adminClientId}/disable`);
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "self_lockout", reason: "own_client" });
    expect(refused.body.fix).toContain(`testbay-server client disable ${adminClientId}`);
    expect((await call(`${server.baseUrl}/me`, { headers: adminToken })).status).toBe(200);
  });
});

describe("who may", () => {
  const routes = (id: string) =>
    [
      ["/v1/clients", { role: "ci" }],
      [`/v1/clients/${id}/disable`, undefined],
      [`/v1/clients/${id}/enable`, undefined],
      [`/v1/clients/${id}/rotate`, undefined],
    ] as const;

  it("refuses ci clients, viewers and members with 403, changing nothing", async () => {
    const target = (await asClient(adminToken, "/v1/clients", { role: "ci" })).body.client_id;
    const before = await call(`${server.baseUrl}/clients`, { headers: adminToken });
    for (const [path, body] of routes(target)) {
      const byClient = await asClient(ciToken, path, body);
      expect(byClient.status, path).toBe(403);
      for (const role of ["viewer", "member"] as const) {
        const byPerson = await asPerson(sessions[role], path, body);
        expect(byPerson.status, `${role} ${path}`).toBe(403);
        expect(byPerson.body).toMatchObject({ code: "forbidden", reason: "role" });
        expect(byPerson.body.fix).toContain("admin role");
      }
    }
    expect((await call(`${server.baseUrl}/clients`, { headers: adminToken })).body).toEqual(before.body);
  });

  it("answers 404 for another organization's client, as for an unknown one", async () => {
    for (const [path, body] of routes(otherOrgClientId).slice(1)) {
      for (const response of [
        await asClient(adminToken, path, body),
        await asPerson(sessions.admin, path, body),
      ]) {
        expect(response.status, path).toBe(404);
        expect(response.body.code).toBe("client_not_found");
      }
    }
    const unknown = await asClient(adminToken, "/v1/clients/cl_nobody/rotate");
    expect(unknown.status).toBe(404);
    const [other] = await server.app.services.clients.listAllClients("globex");
    expect(other?.disabledAt).toBeNull();
  });

  it("refuses a person's change without the CSRF token", async () => {
    const withoutCsrf = await call(`${server.origin}/v1/clients`, {
      headers: { cookie: sessions.admin.cookie, origin: server.origin },
      json: { role: "ci" },
    });
    expect(withoutCsrf.status).toBe(403);
    expect(withoutCsrf.body).toMatchObject({ code: "forbidden", reason: "csrf" });
  });
});
