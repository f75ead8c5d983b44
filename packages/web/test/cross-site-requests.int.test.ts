// CSRF in a real browser (API.md §10): a page on another origin posts a form to the API while the person is signed
// in. The attacker's page is on 127.0.0.1 too, another port: the same site for the browser, so the SameSite=Lax
// session cookie does go along, and only the server's CSRF check (token header + same Origin) stands in the way.
// Needs the dashboard built first (npm run build:web).
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../server/test/harness.ts";
import { launchChromium } from "./browser.ts";
import { ciHeaders, createMember, type Person } from "./sample-data.ts";
import { openSignedIn } from "./sign-in.ts";
import { requireWebBuild } from "./web-build.ts";

let server: TestServer;
let attacker: http.Server;
let attackerOrigin: string;
let browser: Browser;
let member: Person;
let ci: Record<string, string>;
let planId: string;

/** The attacker's pages: each auto-submits one form to the API. */
const forms: Record<string, (api: string) => string> = {
  // A form can only send urlencoded, multipart or text/plain bodies; text/plain can be made to look like JSON.
  "/trigger": (api) => `<form method="post" action="${api}/v1/testplan/run" enctype="text/plain">
      <input name='{"test_plan_id":"${planId}","package_name":"com.example.basic","version":"1.2.3","x":"' value='"}'>
    </form>`,
  "/archive": (api) => `<form method="post" action="${api}/v1/testplans/${planId}/archive"></form>`,
};

const signedIn = () => openSignedIn(browser, server.origin, member);

/** Opens the attacker's page in the signed-in browser and returns the API's answer the form navigated to. */
async function submitFrom(
  page: Page,
  path: string,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const answer = page.waitForResponse((response) => response.url().startsWith(`${server.origin}/v1/`));
  await page.goto(`${attackerOrigin}${path}`);
  const response = await answer;
  return { status: response.status(), body: await response.json() };
}

beforeAll(async () => {
  requireWebBuild();
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = await ciHeaders(server);
  await registerBasicApp(server, ci);
  member = await createMember(server, "mel@example.com");
  const plan = await call(`${server.baseUrl}/testplans`, {
    headers: ci,
    json: {
      name: "Guarded",
      package_name: "com.example.basic",
      steps: [{ type: "inspect", expect: { debuggable: false } }],
    },
  });
  planId = plan.body.id;
  attacker = http.createServer((req, res) => {
    const form = forms[req.url ?? ""];
    if (!form) return void res.writeHead(404).end();
    res
      .writeHead(200, { "content-type": "text/html" })
      .end(`<!doctype html><body>${form(server.origin)}<script>document.forms[0].submit()</script></body>`);
  });
  await new Promise<void>((resolve) => attacker.listen(0, "127.0.0.1", resolve));
  attackerOrigin = `http://127.0.0.1:${(attacker.address() as AddressInfo).port}`;
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await new Promise((resolve) => attacker?.close(resolve));
  await server?.close();
});

describe("a cross-site form post with the person's session cookie", () => {
  it("cannot trigger a run: 403 csrf, and no execution is created", async () => {
    const page = await signedIn();
    const answer = await submitFrom(page, "/trigger");
    // 403, not 401: the cookie did arrive and was recognised; the missing CSRF token is what refused it.
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ code: "forbidden", reason: "csrf" });
    const runs = await call(`${server.baseUrl}/executions?test_plan_id=${planId}`, { headers: ci });
    expect(runs.body.items).toEqual([]);
    await page.context().close();
  });

  it("cannot change a plan either, while the same person's dashboard still can", async () => {
    const page = await signedIn();
    const answer = await submitFrom(page, "/archive");
    expect(answer.status).toBe(403);
    expect(answer.body).toMatchObject({ code: "forbidden", reason: "csrf" });
    expect((await call(`${server.baseUrl}/testplans/${planId}`, { headers: ci })).body.state).toBe("active");

    // The dashboard's own page, with the session's token and its own Origin, is let through.
    await page.goto(`${server.origin}/plans/${planId}`);
    const archived = await page.evaluate(async (id) => {
      const session = await fetch("/auth/session").then((response) => response.json());
      const response = await fetch(`/v1/testplans/${id}/archive`, {
        method: "POST",
        headers: { "x-csrf-token": session.csrf_token },
      });
      return response.status;
    }, planId);
    expect(archived).toBe(200);
    await page.context().close();
  });
});
