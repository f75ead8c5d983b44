import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../test/harness.ts";

let server: TestServer;
let acme: Record<string, string>;
let globex: Record<string, string>;

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  acme = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  globex = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
});
afterAll(() => server.close());

const createApp = (headers: Record<string, string>, json: unknown) =>
  call(`${server.baseUrl}/apps`, { headers, json });

describe("registering apps", () => {
  it("registers an app and answers 201 with it", async () => {
    const { status, body } = await createApp(acme, {
      package_name: "com.acme.Shop",
      platform: "android",
      display_name: "Acme Shop",
    });
    expect(status).toBe(201);
    expect(body).toEqual({
      package_name: "com.acme.Shop",
      platform: "android",
      display_name: "Acme Shop",
      created_at: new Date(server.clock.now()).toISOString(),
      version_count: 0,
      latest_version: null,
    });
  });

  it("answers 409 app_exists for a package name the organization has already", async () => {
    await createApp(acme, { package_name: "com.acme.twice", platform: "ios" });
    const { status, body } = await createApp(acme, { package_name: "com.acme.twice", platform: "ios" });
    expect(status).toBe(409);
    expect(body.code).toBe("app_exists");
  });

  it("lets two organizations register the same package name", async () => {
    expect((await createApp(acme, { package_name: "com.shared.name", platform: "android" })).status).toBe(
      201,
    );
    expect((await createApp(globex, { package_name: "com.shared.name", platform: "android" })).status).toBe(
      201,
    );
  });

  it("refuses bad fields with the path of each", async () => {
    const cases: Array<[unknown, string]> = [
      [{ package_name: "com.acme.x", platform: "windows" }, "/platform"],
      [{ package_name: "com.acme.x" }, "/platform"],
      [{ package_name: "com.acme.x", platform: "ios", owner: "me" }, "/owner"],
      [{ package_name: "../etc", platform: "ios" }, "/package_name"],
      [{ package_name: "x".repeat(300), platform: "ios" }, "/package_name"],
      [{ package_name: 42, platform: "ios" }, "/package_name"],
    ];
    for (const [json, path] of cases) {
      const { status, body } = await createApp(acme, json);
      expect(status, JSON.stringify(json).slice(0, 80)).toBe(400);
      expect(body.code).toBe("invalid_request");
      expect(body.errors.map((e: { path: string }) => e.path)).toContain(path);
    }
  });

  it("is for ci and admin clients; agents may only read", async () => {
    const agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
    const refused = await createApp(agent, { package_name: "com.acme.agent", platform: "ios" });
    expect(refused.status).toBe(403);
    expect((await call(`${server.baseUrl}/apps/com.acme.Shop`, { headers: agent })).status).toBe(200);
  });
});

describe("looking apps up", () => {
  it("finds an app by its exact package name", async () => {
    const { status, body } = await call(`${server.baseUrl}/apps/com.acme.Shop`, { headers: acme });
    expect(status).toBe(200);
    expect(body.package_name).toBe("com.acme.Shop");
  });

  it("says case_mismatch and suggests the registered name when only the case differs", async () => {
    const { status, body } = await call(`${server.baseUrl}/apps/com.acme.shop`, { headers: acme });
    expect(status).toBe(404);
    expect(body).toMatchObject({
      code: "app_not_found",
      reason: "case_mismatch",
      did_you_mean: "com.acme.Shop",
    });
    expect(body.fix).toMatch(/case-sensitive/);
  });

  it("shows another organization's app, in any case, exactly like an unknown one", async () => {
    const exact = await call(`${server.baseUrl}/apps/com.acme.Shop`, { headers: globex });
    const folded = await call(`${server.baseUrl}/apps/com.acme.shop`, { headers: globex });
    const unknown = await call(`${server.baseUrl}/apps/com.nobody.Shop`, { headers: globex });
    for (const response of [exact, folded, unknown]) {
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: "app_not_found", reason: "unknown" });
      expect(response.body.did_you_mean).toBeUndefined();
    }
    // The texts name the package asked for (fix: the command to register it), and nothing else differs.
    const name = /com\.\w+\.Shop|com\.acme\.shop/g;
    const strip = (body: { detail: string; fix: string; request_id: string }) => ({
      ...body,
      request_id: "",
      detail: body.detail.replace(name, "NAME"),
      fix: body.fix.replace(name, "NAME"),
    });
    expect(strip(exact.body)).toEqual(strip(unknown.body));
    expect(strip(folded.body)).toEqual(strip(unknown.body));
  });

  it("lists the organization's apps newest first, in pages that neither skip nor repeat", async () => {
    const names: string[] = [];
    for (let i = 0; i < 5; i++) {
      server.clock.advance(1000);
      const name = `com.paged.app${i}`;
      expect((await createApp(globex, { package_name: name, platform: "android" })).status).toBe(201);
      names.push(name);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=2&cursor=${cursor}` : "?limit=2";
      const page = await call(`${server.baseUrl}/apps${query}`, { headers: globex });
      expect(page.status).toBe(200);
      expect(page.body.items.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.items.map((app: { package_name: string }) => app.package_name));
      cursor = page.body.next_cursor;
      if (pages++ === 0) {
        server.clock.advance(1000);
        await createApp(globex, { package_name: "com.paged.late", platform: "android" });
      }
    } while (cursor && pages < 10);
    expect(seen).toEqual([...[...names].reverse(), "com.shared.name"]);
    expect(seen).not.toContain("com.acme.Shop");
  });

  it("refuses a limit outside 1–200", async () => {
    for (const limit of ["0", "201", "ten"]) {
      const { status, body } = await call(`${server.baseUrl}/apps?limit=${limit}`, { headers: acme });
      expect(status, limit).toBe(400);
      expect(body.code).toBe("invalid_request");
    }
  });
});

describe("an app's versions, summarized", () => {
  it("counts the versions and names the latest one, in the list and on the app; a deleted one is not counted", async () => {
    const initech = { "x-api-key": await server.token(await server.createClient("initech", "ci")) };
    const admin = { "x-api-key": await server.token(await server.createClient("initech", "admin")) };
    await registerBasicApp(server, initech, "1.0.0");
    const firstAt = new Date(server.clock.now()).toISOString();
    server.clock.advance(60_000);
    await registerBasicApp(server, initech, "1.1.0"); // the app is there already: only the upload counts
    const secondAt = new Date(server.clock.now()).toISOString();

    const summary = async () => {
      const list = await call(`${server.baseUrl}/apps`, { headers: initech });
      const one = await call(`${server.baseUrl}/apps/com.example.basic`, { headers: initech });
      expect(list.body.items).toEqual([one.body]);
      return one.body;
    };
    expect(await summary()).toMatchObject({
      version_count: 2,
      latest_version: { version: "1.1.0", created_at: secondAt },
    });

    const deleted = await fetch(`${server.baseUrl}/apps/com.example.basic/versions/1.1.0`, {
      method: "DELETE",
      headers: admin,
    });
    expect(deleted.status).toBe(204);
    expect(await summary()).toMatchObject({
      version_count: 1,
      latest_version: { version: "1.0.0", created_at: firstAt },
    });
  });

  it("says none for an app without versions", async () => {
    const { body } = await call(`${server.baseUrl}/apps/com.acme.twice`, { headers: acme });
    expect(body).toMatchObject({ version_count: 0, latest_version: null });
  });
});
