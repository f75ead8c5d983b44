// GET /downloads/* and the server's version, on a real server. The files the build makes are stood in for by
// files this test writes: a second copy of the routes reads them from a temporary directory under /fixture.
// That the real build's files are served and install is tested in packages/client/test/install.int.test.ts.
import { createHash } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import { downloads, downloadsRoutes } from "./index.ts";

const packageJson = JSON.parse(await readFile(new URL("../../../package.json", import.meta.url), "utf8")) as {
  version: string;
};

let server: TestServer;
let filled: string;
let empty: string;
const contents = new Map<string, Buffer>();

beforeAll(async () => {
  filled = await mkdtemp(path.join(tmpdir(), "testbay-downloads-"));
  empty = await mkdtemp(path.join(tmpdir(), "testbay-downloads-empty-"));
  for (const { file } of downloads) {
    const bytes = Buffer.from(`the bytes of ${file}: ${"x".repeat(1000)}`);
    contents.set(file, bytes);
    await writeFile(path.join(filled, file), bytes);
  }
  server = await startTestServer({
    beforeListen: async (app) => {
      await app.register(downloadsRoutes, { dir: filled, prefix: "/fixture" });
      await app.register(downloadsRoutes, { dir: empty, prefix: "/unbuilt" });
    },
  });
});

afterAll(async () => {
  await server?.close();
  await rm(filled, { recursive: true, force: true });
  await rm(empty, { recursive: true, force: true });
});

describe("the server's version", () => {
  it("is in GET /healthz and the OpenAPI document, read from packages/server/package.json", async () => {
    expect((await call(`${server.origin}/healthz`)).body).toEqual({
      status: "ok",
      version: packageJson.version,
    });
    const document = (await call(`${server.baseUrl}/openapi.json`)).body;
    expect(document.info.version).toBe(packageJson.version);
    expect(document.paths["/downloads/testbay.mjs"].get.operationId).toBe("downloadCliBundle");
    expect(document.paths["/downloads/testbay-cli.tgz"].get.operationId).toBe("downloadCliPackage");
    expect(document.paths["/downloads/testbay-agent.tgz"].get.operationId).toBe("downloadAgentPackage");
    expect(document.paths["/downloads/testbay.schema.json"].get.operationId).toBe("downloadPlansFileSchema");
  });
});

describe("GET /downloads/*", () => {
  it.each(downloads)(
    "serves $file without credentials, whole, with its SHA-256 as ETag",
    async ({ file }) => {
      const response = await fetch(`${server.origin}/fixture/downloads/${file}`);
      expect(response.status).toBe(200);
      const body = Buffer.from(await response.arrayBuffer());
      const expected = contents.get(file);
      expect(body.equals(expected ?? Buffer.alloc(0))).toBe(true);
      expect(response.headers.get("content-type")).toMatch(
        file.endsWith(".mjs") ? /javascript/ : file.endsWith(".json") ? /^application\/schema\+json/ : /gzip/,
      );
      expect(response.headers.get("etag")).toBe(`"${createHash("sha256").update(body).digest("hex")}"`);
    },
  );

  it("serves one range, for a download resumed after a dropped connection", async () => {
    const response = await fetch(`${server.origin}/fixture/downloads/testbay-cli.tgz`, {
      headers: { range: "bytes=4-8" },
    });
    expect(response.status).toBe(206);
    expect(await response.text()).toBe("bytes");
  });

  it("follows a rebuild: new bytes get a new ETag", async () => {
    const url = `${server.origin}/fixture/downloads/testbay.mjs`;
    const before = (await fetch(url)).headers.get("etag");
    const rebuilt = Buffer.from("console.log('rebuilt, and longer than before so the size differs too');");
    await writeFile(path.join(filled, "testbay.mjs"), rebuilt);
    contents.set("testbay.mjs", rebuilt);
    const after = await fetch(url);
    expect(Buffer.from(await after.arrayBuffer()).equals(rebuilt)).toBe(true);
    expect(after.headers.get("etag")).not.toBe(before);
  });

  it("answers a file the build has not made with a 404 problem whose fix is to build", async () => {
    const { status, headers, body } = await call(`${server.origin}/unbuilt/downloads/testbay-agent.tgz`);
    expect(status).toBe(404);
    expect(headers.get("content-type")).toMatch(/application\/problem\+json/);
    expect(body).toMatchObject({ status: 404, reason: "download_not_built" });
    expect(body.detail).toContain("testbay-agent.tgz has not been built");
    expect(body.fix).toContain("npm run build");
  });

  it("has no other files", async () => {
    const { status, body } = await call(`${server.origin}/downloads/package.json`);
    expect(status).toBe(404);
    expect(body.code).toBe("route_not_found");
  });
});
