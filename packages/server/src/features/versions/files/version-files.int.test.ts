// Version files (API.md §14) over HTTP: PUT, the list, GET and HEAD of the bytes, the refusals from the headers,
// the per-version limit, another organization, and DELETE of the version taking its files with it.
import { createHash } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, registerBasicApp, startTestServer, type TestServer } from "../../../../test/harness.ts";
import { RawConnection } from "../../../../test/raw-http.ts";
import { newId } from "../../../ids.ts";

const pkg = "com.example.basic";

let server: TestServer;
let ci: Record<string, string>;
let admin: Record<string, string>;

const versionUrl = (version: string) => `${server.baseUrl}/apps/${pkg}/versions/${version}`;
const fileUrl = (version: string, name: string) => `${versionUrl(version)}/files/${name}`;
const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

function put(url: string, body: Buffer, headers = ci) {
  return fetch(url, {
    method: "PUT",
    headers: { ...headers, "content-type": "application/octet-stream" },
    body,
  }).then(async (response) => ({
    status: response.status,
    headers: response.headers,
    // biome-ignore lint/suspicious/noExplicitAny: tests assert on response bodies field by field
    body: (await response.json()) as any,
  }));
}

async function storedKeys(): Promise<string[]> {
  const keys: string[] = [];
  for await (const key of server.app.services.blobs.keys()) keys.push(key);
  return keys.sort();
}

beforeAll(async () => {
  server = await startTestServer({ env: { TESTBAY_RATE_LIMIT_BURST: "100000" } });
  ci = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  admin = { "x-api-key": await server.token(await server.createClient("acme", "admin")) };
  for (const version of ["1.0", "2.0", "3.0", "4.0"]) await registerBasicApp(server, ci, version);
});
afterAll(() => server.close());

describe("version files", () => {
  it("stores a file: 201 {name, size_bytes, sha256, created_at}, listed, served whole and by Range, HEAD with its ETag", async () => {
    const bytes = Buffer.from('{"users":[{"name":"Ada"}]}\n');
    const stored = await put(fileUrl("1.0", "users.json"), bytes);
    expect(stored.status, JSON.stringify(stored.body)).toBe(201);
    expect(stored.body).toEqual({
      name: "users.json",
      size_bytes: bytes.length,
      sha256: sha256(bytes),
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT/),
    });
    expect(stored.headers.get("location")).toBe(`/v1/apps/${pkg}/versions/1.0/files/users.json`);

    const listed = await call(`${versionUrl("1.0")}/files`, { headers: ci });
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual({ items: [stored.body] });

    const whole = await fetch(fileUrl("1.0", "users.json"), { headers: ci });
    expect(whole.status).toBe(200);
    expect(whole.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
    expect(Buffer.from(await whole.arrayBuffer())).toEqual(bytes);
    const part = await fetch(fileUrl("1.0", "users.json"), { headers: { ...ci, range: "bytes=2-6" } });
    expect(part.status).toBe(206);
    expect(await part.text()).toBe(bytes.subarray(2, 7).toString());

    const head = await fetch(fileUrl("1.0", "users.json"), { method: "HEAD", headers: ci });
    expect(head.status).toBe(200);
    expect(head.headers.get("etag")).toBe(`"${sha256(bytes)}"`);
    const missing = await fetch(fileUrl("1.0", "nope.apk"), { method: "HEAD", headers: ci });
    expect(missing.status).toBe(404);
  });

  it("answers 404 version_file_not_found with the upload that adds it", async () => {
    const missing = await call(fileUrl("1.0", "orchestrator.apk"), { headers: ci });
    expect(missing.body).toMatchObject({ status: 404, code: "version_file_not_found" });
    expect(missing.body.fix).toContain("--extra-file orchestrator.apk=PATH");
  });

  it("answers 409 version_file_exists from the headers: no 100 Continue, no body read, the file unchanged", async () => {
    const first = Buffer.from("first");
    expect((await put(fileUrl("1.0", "same.txt"), first)).status).toBe(201);
    const connection = await RawConnection.open(server.origin);
    connection.send(
      `PUT /v1/apps/${pkg}/versions/1.0/files/same.txt HTTP/1.1\r\nHost: x\r\nx-api-key: ${ci["x-api-key"]}\r\n` +
        "Content-Type: application/octet-stream\r\nContent-Length: 6\r\nExpect: 100-continue\r\n\r\n",
    );
    const response = await connection.finalResponse();
    connection.destroy();
    expect(response.status).toBe(409);
    expect(response.json).toMatchObject({ code: "version_file_exists" });
    expect(response.json.fix).toContain("--extra-file same.txt=PATH");
    expect(connection.text.startsWith("HTTP/1.1 100")).toBe(false);
    expect(await (await fetch(fileUrl("1.0", "same.txt"), { headers: ci })).text()).toBe("first");
  });

  it("answers 413 file_size_exceeded from a Content-Length over 100 MiB, before the body", async () => {
    const connection = await RawConnection.open(server.origin);
    connection.send(
      `PUT /v1/apps/${pkg}/versions/1.0/files/huge.bin HTTP/1.1\r\nHost: x\r\nx-api-key: ${ci["x-api-key"]}\r\n` +
        `Content-Type: application/octet-stream\r\nContent-Length: ${100 * 1024 * 1024 + 1}\r\nExpect: 100-continue\r\n\r\n`,
    );
    const response = await connection.finalResponse();
    connection.destroy();
    expect(response.status).toBe(413);
    expect(response.json).toMatchObject({ code: "file_size_exceeded", limit_bytes: 100 * 1024 * 1024 });
    expect(response.json.fix).toBeTruthy();
    expect(connection.text.startsWith("HTTP/1.1 100")).toBe(false);
    expect((await call(fileUrl("1.0", "huge.bin"), { headers: ci })).status).toBe(404);
  });

  it("refuses a name outside [A-Za-z0-9._-]{1,100} with 400 invalid_request", async () => {
    const refused = await put(fileUrl("1.0", "a%20b.txt"), Buffer.from("x"));
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe("invalid_request");
  });

  it("answers 404 for an unknown version or app", async () => {
    expect((await put(fileUrl("9.9", "a.txt"), Buffer.from("x"))).body.code).toBe("app_version_not_found");
    expect((await call(`${versionUrl("9.9")}/files`, { headers: ci })).body.code).toBe(
      "app_version_not_found",
    );
    const unknownApp = await put(
      `${server.baseUrl}/apps/com.example.nope/versions/1.0/files/a.txt`,
      Buffer.from("x"),
    );
    expect(unknownApp.body.code).toBe("app_not_found");
  });

  it("takes 20 files a version, then answers 409 version_files_limit with a fix", async () => {
    for (let i = 0; i < 20; i++) {
      const stored = await put(fileUrl("2.0", `file-${i}.txt`), Buffer.from(`file ${i}`));
      expect(stored.status, JSON.stringify(stored.body)).toBe(201);
    }
    const refused = await put(fileUrl("2.0", "file-20.txt"), Buffer.from("one too many"));
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "version_files_limit", limit: 20 });
    expect(refused.body.fix).toBeTruthy();
    expect((await call(`${versionUrl("2.0")}/files`, { headers: ci })).body.items).toHaveLength(20);
    // Another version has its own 20.
    expect((await put(fileUrl("3.0", "file-20.txt"), Buffer.from("x"))).status).toBe(201);
  });

  it("of concurrent uploads, one name or the version's last place goes to exactly one", async () => {
    await registerBasicApp(server, ci, "5.0");
    const same = await Promise.all(
      Array.from({ length: 4 }, (_, i) => put(fileUrl("5.0", "race.txt"), Buffer.from(`upload ${i}`))),
    );
    expect(same.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    for (const refused of same.filter((r) => r.status === 409)) {
      expect(refused.body.code).toBe("version_file_exists");
    }
    for (let i = 0; i < 18; i++)
      expect((await put(fileUrl("5.0", `f${i}.txt`), Buffer.from("x"))).status).toBe(201);
    const last = await Promise.all(
      Array.from({ length: 4 }, (_, i) => put(fileUrl("5.0", `last-${i}.txt`), Buffer.from("x"))),
    );
    expect(last.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    expect((await call(`${versionUrl("5.0")}/files`, { headers: ci })).body.items).toHaveLength(20);
  });

  it("is invisible to another organization", async () => {
    const other = { "x-api-key": await server.token(await server.createClient("globex", "ci")) };
    await registerBasicApp(server, other, "1.0");
    expect((await call(fileUrl("1.0", "users.json"), { headers: other })).body.code).toBe(
      "version_file_not_found",
    );
    expect((await call(`${versionUrl("1.0")}/files`, { headers: other })).body).toEqual({ items: [] });
    // The same name in its own version is its own file.
    expect((await put(fileUrl("1.0", "users.json"), Buffer.from("globex's"), other)).status).toBe(201);
    expect(await (await fetch(fileUrl("1.0", "users.json"), { headers: ci })).text()).toContain("Ada");
  });

  it("goes with its version: DELETE removes the files' rows and blobs, and a re-upload of the version has none", async () => {
    expect((await put(fileUrl("4.0", "a.apk"), Buffer.from("apk bytes"))).status).toBe(201);
    expect((await put(fileUrl("4.0", "b.json"), Buffer.from("{}"))).status).toBe(201);
    const before = await storedKeys();
    const removed = await call(versionUrl("4.0"), { method: "DELETE", headers: admin });
    expect(removed.status, JSON.stringify(removed.body)).toBe(204);
    const after = await storedKeys();
    // The binary and the two files.
    expect(before.length - after.length).toBe(3);
    expect(
      before.filter((key) => !after.includes(key)).filter((key) => key.startsWith("versionfiles/")),
    ).toHaveLength(2);
    await registerBasicApp(server, ci, "4.0");
    expect((await call(`${versionUrl("4.0")}/files`, { headers: ci })).body).toEqual({ items: [] });
    expect((await call(fileUrl("4.0", "a.apk"), { headers: ci })).status).toBe(404);
  });

  it("removes on start a stored version file no record refers to (a crash between store and record)", async () => {
    // Put into the blob store itself (a directory, or S3 in the scaled project), as an upload would.
    const staging = path.join(server.config.dataDir, "tmp");
    await mkdir(staging, { recursive: true });
    const orphan = newId("blob", server.clock.now() - 60 * 60 * 1000);
    const fresh = newId("blob", server.clock.now());
    for (const [id, text] of [
      [orphan, "stored, never recorded"],
      [fresh, "an upload in flight on another instance"],
    ] as const) {
      const file = path.join(staging, `${id}.orphan`);
      await writeFile(file, text);
      await server.app.services.blobs.putFile(`versionfiles/org_crashed/${id}`, file);
    }

    // A restart on the same database and store (S3 in the scaled project: its URL is not inherited otherwise).
    const restarted = await startTestServer({
      shareWith: server,
      clock: server.clock,
      env: { TESTBAY_STORAGE_URL: server.config.storageUrl },
    });
    await restarted.close();
    const left = await storedKeys();
    expect(left).not.toContain(`versionfiles/org_crashed/${orphan}`);
    expect(left).toContain(`versionfiles/org_crashed/${fresh}`);
    // Recorded files are untouched.
    expect((await fetch(fileUrl("1.0", "users.json"), { headers: ci })).status).toBe(200);
  });
});
