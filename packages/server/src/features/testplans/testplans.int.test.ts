import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import type { IssuedCredentials } from "../clients/index.ts";

let server: TestServer;
let acme: Record<string, string>;
let globex: Record<string, string>;
let acmeClient: IssuedCredentials;
let globexClient: IssuedCredentials;

/** New tokens: for after the clock has moved past the old ones' 24 hours. */
async function refreshTokens() {
  acme = { "x-api-key": await server.token(acmeClient) };
  globex = { "x-api-key": await server.token(globexClient) };
}

const inspect = { type: "inspect", expect: { min_sdk_at_most: 26, debuggable: false } };

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  acmeClient = await server.createClient("acme", "ci");
  globexClient = await server.createClient("globex", "ci");
  await refreshTokens();
  for (const [package_name, platform] of [
    ["com.acme.shop", "android"],
    ["com.acme.ios", "ios"],
    ["com.acme.xcui", "ios"],
  ]) {
    expect(
      (await call(`${server.baseUrl}/apps`, { headers: acme, json: { package_name, platform } })).status,
    ).toBe(201);
  }
});
afterAll(() => server.close());

const createPlan = (body: Record<string, unknown>, headers = acme) =>
  call(`${server.baseUrl}/testplans`, {
    headers,
    json: { name: "smoke", package_name: "com.acme.shop", ...body },
  });
const planUrl = (id: string, action = "") => `${server.baseUrl}/testplans/${id}${action}`;

describe("creating test plans", () => {
  it("creates an active plan with defaults", async () => {
    const { status, body } = await createPlan({ steps: [inspect] });
    expect(status).toBe(201);
    expect(body).toMatchObject({
      name: "smoke",
      package_name: "com.acme.shop",
      state: "active",
      devices: [],
      steps: [inspect],
      timeout_seconds: 1800,
      max_attempts: 1,
    });
    expect(body.id).toMatch(/^tp_[0-9A-Z]{26}$/);
    expect((await call(planUrl(body.id), { headers: acme })).body).toEqual(body);
  });

  it("keeps every kind of step and device entries as given", async () => {
    const steps = [
      inspect,
      {
        type: "shell",
        name: "unit",
        run: "./gradlew test",
        junit: "build/test-results/**/*.xml",
        timeout_seconds: 600,
      },
      {
        type: "instrumentation",
        test_package: "com.acme.shop.test",
        runner: "androidx.test.runner.AndroidJUnitRunner",
        args: { size: "small" },
      },
      { type: "maestro", flows: ["appId: com.acme.shop\n---\n- launchApp\n"] },
    ];
    const devices = [{ platform: "android", model: "Pixel 8", os_version: "14" }, { platform: "android" }];
    const { status, body } = await createPlan({ steps, devices, max_attempts: 3, timeout_seconds: 600 });
    expect(status).toBe(201);
    expect(body).toMatchObject({ steps, devices, max_attempts: 3, timeout_seconds: 600 });
  });

  it("reports mistakes with the path of each, inside the step that has them", async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ steps: [{ type: "teleport" }] }, "/steps/0/type"],
      [{ steps: [inspect, { type: "shell", run: "x", sudo: true }] }, "/steps/1/sudo"],
      [{ steps: [{ type: "shell" }] }, "/steps/0/run"],
      [{ steps: [] }, "/steps"],
      [{ steps: [inspect], devices: [{ platform: "ios" }] }, "/devices/0/platform"],
      [{ steps: [inspect], max_attempts: 4 }, "/max_attempts"],
      [{ steps: [inspect], color: "blue" }, "/color"],
      [
        { steps: [inspect], devices: [{ platform: "android", labels: { "gpu=host": "yes" } }] },
        "/devices/0/labels",
      ],
    ];
    for (const [body, path] of cases) {
      const response = await createPlan(body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.code).toBe("invalid_request");
      expect(
        response.body.errors.map((e: { path: string }) => e.path),
        JSON.stringify(body),
      ).toContain(path);
    }
    const ios = await createPlan({
      package_name: "com.acme.ios",
      steps: [{ type: "instrumentation", test_package: "x.y" }],
    });
    expect(ios.status).toBe(400);
    expect(ios.body.errors[0].path).toBe("/steps/0/type");
  });

  it("takes xcuitest steps for iOS apps only, with their device options", async () => {
    const xcuitest = {
      type: "xcuitest",
      only_testing: ["ShopUITests", "ShopUITests/CheckoutTests", "ShopUITests/CheckoutTests/testPayWithCard"],
      skip_testing: ["Shop UITests/Flaky_Tests/checkout(card:)"],
      shards: 3,
      sharding: "uniform",
      retry_failed_tests: 2,
      clear_package_data: true,
      record_video: "always",
      logcat: false,
      screenshot_on_failure: true,
      timeout_seconds: 900,
    };
    const maestro = { type: "maestro", flows: ["appId: com.acme.xcui\n---\n- launchApp\n"] };
    const ios = await createPlan({
      package_name: "com.acme.xcui",
      devices: [{ platform: "ios", model: "iPhone 15" }],
      steps: [xcuitest, maestro],
    });
    expect(ios.status).toBe(201);
    expect(ios.body.steps).toEqual([xcuitest, maestro]);

    const android = await createPlan({ steps: [{ type: "xcuitest" }] });
    expect(android.status).toBe(400);
    expect(android.body).toMatchObject({
      code: "invalid_request",
      errors: [{ path: "/steps/0/type", message: "xcuitest steps are for iOS apps" }],
    });
    expect(android.body.fix).toContain("com.acme.shop is an Android app");

    // PATCH checks the same: an Android plan cannot gain an xcuitest step.
    const plan = await createPlan({ steps: [inspect] });
    const patched = await call(planUrl(plan.body.id), {
      method: "PATCH",
      headers: acme,
      json: { steps: [{ type: "xcuitest" }] },
    });
    expect(patched.status).toBe(400);
    expect(patched.body.errors[0].path).toBe("/steps/0/type");
  });

  it("refuses xcuitest identifiers that are not Target[/Class[/method]], saying how to write them", async () => {
    const cases: Array<[string, string]> = [
      ["ShopUITests/", "/steps/0/only_testing/0"],
      ["ShopUITests/CheckoutTests/testPay/extra", "/steps/0/only_testing/0"],
      ["ShopUITests/CheckoutTests.testPay", "/steps/0/only_testing/0"],
      ["-only-testing:ShopUITests", "/steps/0/only_testing/0"],
    ];
    for (const [identifier, path] of cases) {
      const { status, body } = await createPlan({
        package_name: "com.acme.xcui",
        steps: [{ type: "xcuitest", only_testing: [identifier] }],
      });
      expect(status, identifier).toBe(400);
      expect(body.code).toBe("invalid_request");
      expect(body.errors[0].path, identifier).toBe(path);
      expect(body.fix).toContain("ShopUITests/CheckoutTests/testPayWithCard");
    }
    const skip = await createPlan({
      package_name: "com.acme.xcui",
      steps: [inspect, { type: "xcuitest", skip_testing: ["ShopUITests", "a//b"] }],
    });
    expect(skip.status).toBe(400);
    expect(skip.body.errors).toEqual([
      { path: "/steps/1/skip_testing/1", in: "body", message: expect.stringContaining("empty class") },
    ]);
    const schema = await createPlan({
      package_name: "com.acme.xcui",
      steps: [{ type: "xcuitest", only_testing: ["A", "A"] }],
    });
    expect(schema.status).toBe(400);
    expect(schema.body.errors[0].path).toBe("/steps/0/only_testing");
  });

  it("answers 404 app_not_found for an app the organization does not have", async () => {
    const { status, body } = await createPlan({ steps: [inspect] }, globex);
    expect(status).toBe(404);
    expect(body).toMatchObject({ code: "app_not_found", reason: "unknown" });
  });
});

describe("the plan lifecycle", () => {
  it("archives, deletes and restores, and says which state a plan is in", async () => {
    const { body: plan } = await createPlan({ steps: [inspect] });

    const archived = await call(planUrl(plan.id, "/archive"), { method: "POST", headers: acme });
    expect(archived.status).toBe(200);
    expect(archived.body.state).toBe("archived");
    expect((await call(planUrl(plan.id), { headers: acme })).body.state).toBe("archived");

    const restored = await call(planUrl(plan.id, "/restore"), { method: "POST", headers: acme });
    expect(restored.body.state).toBe("active");

    server.clock.advance(1000);
    const deleted = await call(planUrl(plan.id), { method: "DELETE", headers: acme });
    expect(deleted.status).toBe(200);
    expect(deleted.body.state).toBe("deleted");
    expect(Date.parse(deleted.body.restorable_until)).toBe(server.clock.now() + 30 * 24 * 3600 * 1000);

    const patchDeleted = await call(planUrl(plan.id), {
      method: "PATCH",
      headers: acme,
      json: { name: "x" },
    });
    expect(patchDeleted.status).toBe(404);
    expect(patchDeleted.body).toMatchObject({ code: "test_plan_not_found", reason: "deleted" });
    expect(patchDeleted.body.fix).toContain(`/v1/testplans/${plan.id}/restore`);

    expect((await call(planUrl(plan.id, "/restore"), { method: "POST", headers: acme })).body.state).toBe(
      "active",
    );
  });

  it("changes a plan with PATCH and keeps what was not sent", async () => {
    const { body: plan } = await createPlan({ steps: [inspect] });
    server.clock.advance(5000);
    const { status, body } = await call(planUrl(plan.id), {
      method: "PATCH",
      headers: acme,
      json: { name: "nightly", max_attempts: 2 },
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      name: "nightly",
      max_attempts: 2,
      steps: [inspect],
      created_at: plan.created_at,
    });
    expect(body.updated_at).not.toBe(plan.updated_at);
    const empty = await call(planUrl(plan.id), { method: "PATCH", headers: acme, json: {} });
    expect(empty.status).toBe(400);
  });

  it("shows another organization's plan exactly like an unknown one", async () => {
    const { body: plan } = await createPlan({ steps: [inspect] });
    const other = await call(planUrl(plan.id), { headers: globex });
    const unknown = await call(planUrl("tp_01ZZZZZZZZZZZZZZZZZZZZZZZZ"), { headers: globex });
    expect(other.status).toBe(404);
    expect(other.body).toMatchObject({ code: "test_plan_not_found", reason: "unknown" });
    expect(other.body.fix).toMatch(/do not work across organizations/);
    expect(other.body.detail.replace(plan.id, "ID")).toBe(unknown.body.detail.replace(/tp_\w+/, "ID"));
    for (const action of ["/archive", "/restore"]) {
      expect((await call(planUrl(plan.id, action), { method: "POST", headers: globex })).status).toBe(404);
    }
    expect((await call(planUrl(plan.id), { method: "DELETE", headers: globex })).status).toBe(404);
    expect((await call(planUrl(plan.id), { headers: acme })).body.state).toBe("active");
  });

  it("purges deleted plans 30 days after deletion", async () => {
    const { body: plan } = await createPlan({ steps: [inspect] });
    await call(planUrl(plan.id), { method: "DELETE", headers: acme });
    server.clock.advance(29 * 24 * 3600 * 1000);
    let restarted = await startTestServer({ shareWith: server, clock: server.clock });
    await restarted.close();
    await refreshTokens();
    expect((await call(planUrl(plan.id), { headers: acme })).body.state).toBe("deleted");
    server.clock.advance(2 * 24 * 3600 * 1000);
    restarted = await startTestServer({ shareWith: server, clock: server.clock });
    await restarted.close();
    await refreshTokens();
    const gone = await call(planUrl(plan.id), { headers: acme });
    expect(gone.status).toBe(404);
    expect(gone.body.reason).toBe("unknown");
  });
});

describe("listing plans", () => {
  it("filters by app and state, hides deleted plans unless asked, and pages newest first", async () => {
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      server.clock.advance(1000);
      const { body } = await createPlan({
        name: `list-${i}`,
        package_name: "com.acme.ios",
        steps: [inspect],
      });
      ids.push(body.id);
    }
    await call(planUrl(String(ids[1]), "/archive"), { method: "POST", headers: acme });
    await call(planUrl(String(ids[2])), { method: "DELETE", headers: acme });

    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = `?package_name=com.acme.ios&limit=2${cursor ? `&cursor=${cursor}` : ""}`;
      const page = await call(`${server.baseUrl}/testplans${query}`, { headers: acme });
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((p: { id: string }) => p.id));
      cursor = page.body.next_cursor;
    } while (cursor && ++pages < 10);
    expect(seen).toEqual([ids[4], ids[3], ids[1], ids[0]]);

    const deleted = await call(`${server.baseUrl}/testplans?package_name=com.acme.ios&state=deleted`, {
      headers: acme,
    });
    expect(deleted.body.items.map((p: { id: string }) => p.id)).toEqual([ids[2]]);
    const archived = await call(`${server.baseUrl}/testplans?state=archived&package_name=com.acme.ios`, {
      headers: acme,
    });
    expect(archived.body.items.map((p: { id: string }) => p.id)).toEqual([ids[1]]);
    const others = await call(`${server.baseUrl}/testplans`, { headers: globex });
    expect(others.body.items).toEqual([]);
  });
});
