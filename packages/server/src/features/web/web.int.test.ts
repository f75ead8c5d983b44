// The dashboard's static files and deep links (GET / and the SPA's paths), on a real server. A stand-in build in
// a temporary directory plays packages/web/dist; the real build is opened in a browser by packages/web/test.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import http from "node:http";
import { tmpdir } from "node:os";
import path from "node:path";
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import { webRoutes } from "./index.ts";

let server: TestServer;
let built: string;
let unbuilt: string;
const html = { accept: "text/html,application/xhtml+xml,*/*;q=0.8" };
const indexHtml =
  "<!doctype html><title>Testbay</title><script type=module src=/assets/index-abc123.js></script>";

beforeAll(async () => {
  built = await mkdtemp(path.join(tmpdir(), "testbay-web-"));
  unbuilt = await mkdtemp(path.join(tmpdir(), "testbay-web-empty-"));
  await mkdir(path.join(built, "assets"));
  await writeFile(path.join(built, "index.html"), indexHtml);
  await writeFile(path.join(built, "theme.js"), "// theme");
  await writeFile(path.join(built, "assets", "index-abc123.js"), "console.log('dashboard')");
  // What the build writes beside a script (vite.config.ts): its Brotli and gzip copies.
  await writeFile(path.join(built, "assets", "page-def456.js"), pageScript);
  await writeFile(path.join(built, "assets", "page-def456.js.br"), brotliCompressSync(pageScript));
  await writeFile(path.join(built, "assets", "page-def456.js.gz"), gzipSync(pageScript));
  server = await startTestServer({
    // In the scaled set the per-address buckets live in the shared Redis, which other files' servers also fill.
    env: { TESTBAY_RATE_LIMIT_BURST: "100000" },
    beforeListen: async (app) => {
      // The real registration (app.ts) serves packages/web/dist at /; these copies serve the stand-ins.
      await app.register(webRoutes, { dir: built, prefix: "/built" });
      await app.register(webRoutes, { dir: unbuilt, prefix: "/unbuilt" });
    },
  });
});

const pageScript = Buffer.from(`export const rows = [${"'a test', ".repeat(500)}];`);

/** A GET that sees the bytes on the wire (fetch would decompress them), with the headers it was answered. */
function rawGet(url: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }>(
    (resolve, reject) => {
      http
        .get(url, { headers }, (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            resolve({
              status: response.statusCode ?? 0,
              headers: response.headers,
              body: Buffer.concat(chunks),
            }),
          );
        })
        .on("error", reject);
    },
  );
}

afterAll(async () => {
  await server?.close();
  await rm(built, { recursive: true, force: true });
  await rm(unbuilt, { recursive: true, force: true });
});

describe("the dashboard's files", () => {
  it("serves index.html at the root, revalidated every time, with a Content-Security-Policy", async () => {
    const response = await fetch(`${server.origin}/built/`, { headers: html });
    expect(response.status).toBe(200);
    expect(response.headers.get("content-type")).toMatch(/^text\/html/);
    expect(response.headers.get("cache-control")).toBe("no-cache");
    expect(response.headers.get("content-security-policy")).toContain("script-src 'self'");
    expect(await response.text()).toBe(indexHtml);
  });

  it("serves hashed assets cached for good, and unhashed top-level files revalidated", async () => {
    const asset = await fetch(`${server.origin}/built/assets/index-abc123.js`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get("content-type")).toMatch(/javascript/);
    expect(asset.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await asset.text()).toBe("console.log('dashboard')");

    const theme = await fetch(`${server.origin}/built/theme.js`);
    expect(theme.status).toBe(200);
    expect(theme.headers.get("cache-control")).toBe("no-cache");
  });

  it("sends the build's Brotli or gzip copy of an asset to a browser that accepts it, the file itself otherwise", async () => {
    const url = `${server.origin}/built/assets/page-def456.js`;
    const brotli = await rawGet(url, { "accept-encoding": "gzip, deflate, br" });
    expect(brotli.status).toBe(200);
    expect(brotli.headers["content-encoding"]).toBe("br");
    expect(brotli.headers["content-type"]).toMatch(/javascript/);
    expect(brotli.headers.vary).toMatch(/accept-encoding/i);
    expect(brotli.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(brotliDecompressSync(brotli.body)).toEqual(pageScript);
    expect(brotli.body.length).toBeLessThan(pageScript.length / 4);

    const gzip = await rawGet(url, { "accept-encoding": "gzip" });
    expect(gzip.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gzip.body)).toEqual(pageScript);

    const identity = await rawGet(url, {});
    expect(identity.headers["content-encoding"]).toBeUndefined();
    expect(identity.body).toEqual(pageScript);
  });

  it("answers a missing asset with the API's JSON 404, and never leaves the build's folder", async () => {
    for (const missing of ["/built/assets/index-gone.js", "/built/assets/..%2F..%2Fetc%2Fpasswd"]) {
      const response = await call(`${server.origin}${missing}`);
      expect(response.status, missing).toBe(404);
      expect(response.body.code, missing).toBe("route_not_found");
    }
  });
});

describe("deep links", () => {
  it("answer index.html for a browser (GET and HEAD) at any path of the dashboard", async () => {
    for (const deep of ["/built/runs", "/built/runs/ex_123?status=failed", "/built/agents"]) {
      const response = await fetch(`${server.origin}${deep}`, { headers: html });
      expect(response.status, deep).toBe(200);
      expect(await response.text(), deep).toBe(indexHtml);
    }
    const head = await fetch(`${server.origin}/built/runs/ex_123`, { method: "HEAD", headers: html });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-type")).toMatch(/^text\/html/);
  });

  it("leave the API's paths their JSON 404s, even for a browser", async () => {
    for (const api of ["/v1/nothing-here", "/docs/nothing-here", "/downloads/nothing", "/auth/nothing"]) {
      const response = await call(`${server.origin}${api}`, { headers: html });
      expect(response.status, api).toBe(404);
      expect(response.headers.get("content-type"), api).toMatch(/^application\/problem\+json/);
    }
  });

  it("answer a JSON 404 to a caller that does not ask for HTML", async () => {
    const response = await call(`${server.origin}/built/runs`, { headers: { accept: "application/json" } });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe("route_not_found");
  });
});

describe("a server whose dashboard is not built", () => {
  it("says at / to run npm run build: a page for a browser, a problem for others", async () => {
    const page = await fetch(`${server.origin}/unbuilt/`, { headers: html });
    expect(page.status).toBe(404);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    expect(await page.text()).toContain("npm run build");

    const problem = await call(`${server.origin}/unbuilt/`);
    expect(problem.status).toBe(404);
    expect(problem.body).toMatchObject({ code: "route_not_found", reason: "dashboard_not_built" });
    expect(problem.body.fix).toContain("npm run build");
  });
});
