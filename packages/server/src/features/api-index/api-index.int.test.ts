import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";

/** GET /v1, the API's base URL that the start banner and credentials.json give: an index, not a 404. */

let server: TestServer;
let version: string;
beforeAll(async () => {
  server = await startTestServer();
  ({ version } = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8")));
});
afterAll(() => server.close());

describe("GET /v1", () => {
  it("answers without a token: the server's version and absolute links that lead somewhere", async () => {
    const index = await call(server.baseUrl);
    expect(index.status, JSON.stringify(index.body)).toBe(200);
    expect(index.body).toEqual({
      version,
      links: {
        openapi: `${server.origin}/v1/openapi.json`,
        docs: `${server.origin}/docs`,
        dashboard: `${server.origin}/`,
      },
    });
    // With a trailing slash, as people type it, the same.
    expect((await call(`${server.baseUrl}/`)).body).toEqual(index.body);

    const openapi = await call(index.body.links.openapi);
    expect(openapi.status).toBe(200);
    expect(openapi.body.info.version).toBe(version);
    expect(openapi.body.paths["/v1"].get).toMatchObject({ operationId: "getApiIndex", security: [] });
    // Documented once: the trailing-slash form is not a second operation.
    expect(openapi.body.paths["/v1/"]).toBeUndefined();
    const docs = await fetch(index.body.links.docs);
    expect(docs.status).toBe(200);
    expect(docs.headers.get("content-type")).toContain("text/html");
  });

  it("counts against the caller's address like the OpenAPI document, unlike the health probes", async () => {
    const index = await fetch(server.baseUrl);
    expect(index.headers.get("ratelimit-policy")).not.toBeNull();
    expect((await fetch(`${server.origin}/healthz`)).headers.get("ratelimit-policy")).toBeNull();
  });
});

describe("GET /v1 behind TESTBAY_PUBLIC_URL", () => {
  let proxied: TestServer;
  beforeAll(async () => {
    proxied = await startTestServer({ env: { TESTBAY_PUBLIC_URL: "https://testbay.example.com/v1" } });
  });
  afterAll(() => proxied.close());

  it("builds its links from the public URL, whatever host the request came to", async () => {
    const index = await call(proxied.baseUrl);
    expect(index.body.links).toEqual({
      openapi: "https://testbay.example.com/v1/openapi.json",
      docs: "https://testbay.example.com/docs",
      dashboard: "https://testbay.example.com/",
    });
  });
});
