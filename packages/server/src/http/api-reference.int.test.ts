import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestServer, type TestServer } from "../../test/harness.ts";

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer();
});
afterAll(() => server.close());

/** Every script and stylesheet a page loads, and any other URL it names in src= or href=. */
function resourcesOf(html: string): string[] {
  return [...html.matchAll(/\b(?:src|href)\s*=\s*["']([^"']+)["']/gi)].map((m) => m[1] ?? "");
}

describe("GET /docs", () => {
  it("is a public HTML page whose scripts and styles all come from this server", async () => {
    const response = await fetch(`${server.origin}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    const html = await response.text();
    const resources = resourcesOf(html);
    expect(resources.some((r) => r.endsWith(".js"))).toBe(true);
    expect(resources.some((r) => r.endsWith(".css"))).toBe(true);
    for (const resource of resources) {
      const url = new URL(resource, `${server.origin}/docs`);
      expect(url.origin, resource).toBe(server.origin);
      const asset = await fetch(url);
      expect(asset.status, resource).toBe(200);
      await asset.arrayBuffer();
    }
    // The browser is told so too: nothing from elsewhere may load or be called.
    const csp = response.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).not.toMatch(/https?:/);
  });

  it("renders this server's own document", async () => {
    const shown = await (await fetch(`${server.origin}/docs/json`)).json();
    const served = await (await fetch(`${server.baseUrl}/openapi.json`)).json();
    expect(shown).toEqual(served);
    const initializer = await (await fetch(`${server.origin}/docs/static/swagger-initializer.js`)).text();
    // Swagger UI would otherwise send the document to an online validator for its badge.
    expect(initializer).toContain("validatorUrl: null");
  });
});
