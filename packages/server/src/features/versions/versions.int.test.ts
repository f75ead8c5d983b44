import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rm, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { call, startTestServer, type TestServer } from "../../../test/harness.ts";
import { RawConnection } from "../../../test/raw-http.ts";
import { newId } from "../../ids.ts";
import { eventsOf } from "../events/index.ts";

const fixtures = fileURLToPath(new URL("../../../test/fixtures/binaries/", import.meta.url));
const fixture = (name: string) => readFile(path.join(fixtures, name));
/** Small enough that a test can pass it, large enough for every fixture. */
const limit = 256 * 1024;

let server: TestServer;
let headers: Record<string, string>;
let apk: Buffer;

beforeAll(async () => {
  server = await startTestServer({
    env: { TESTBAY_MAX_UPLOAD_BYTES: String(limit), TESTBAY_RATE_LIMIT_BURST: "100000" },
  });
  headers = { "x-api-key": await server.token(await server.createClient("acme", "ci")) };
  apk = await fixture("app-basic.apk");
  for (const [package_name, platform] of [
    ["com.example.basic", "android"],
    ["com.example.abis", "android"],
    ["com.example.bundle", "android"],
    ["com.example.iosapp", "ios"],
  ]) {
    const created = await call(`${server.baseUrl}/apps`, { headers, json: { package_name, platform } });
    expect(created.status).toBe(201);
  }
});
afterAll(() => server.close());

const versionUrl = (pkg: string, version: string) =>
  `${server.baseUrl}/apps/${pkg}/versions/${encodeURIComponent(version)}`;

function upload(pkg: string, version: string, body: Buffer, extra: Record<string, string> = {}) {
  return fetch(versionUrl(pkg, version), {
    method: "PUT",
    headers: { ...headers, "content-type": "application/octet-stream", ...extra },
    body,
  }).then(async (response) => ({
    status: response.status,
    headers: response.headers,
    // biome-ignore lint/suspicious/noExplicitAny: tests assert on response bodies field by field
    body: (await response.json()) as any,
  }));
}

/** Every file under the data dir, relative to it. */
/** Files in the data dir (staging areas, local blobs) and objects in the blob store, wherever it is. */
async function filesInDataDir(): Promise<string[]> {
  const root = server.config.dataDir;
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  const files = entries
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(root, path.join(entry.parentPath, entry.name)))
    .filter((file) => !file.startsWith("testbay.db"));
  if (!server.config.storageUrl.startsWith("file:")) {
    for await (const key of server.app.services.blobs.keys()) files.push(`store:${key}`);
  }
  return files.sort();
}

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest();

describe("uploading a version", () => {
  it("stores an APK and answers 201 with what the binary says about itself", async () => {
    const { status, headers: responseHeaders, body } = await upload("com.example.basic", "1.2.3", apk);
    expect(status).toBe(201);
    expect(responseHeaders.get("location")).toBe("/v1/apps/com.example.basic/versions/1.2.3");
    expect(body).toMatchObject({
      package_name: "com.example.basic",
      version: "1.2.3",
      size_bytes: apk.length,
      sha256: sha256(apk).toString("hex"),
      binary: {
        format: "apk",
        platform: "android",
        package_name: "com.example.basic",
        version_name: "1.2.3",
        version_code: 42,
        min_sdk: 24,
        target_sdk: 34,
        debuggable: false,
      },
    });
    expect(body.binary.permissions).toEqual(["android.permission.CAMERA", "android.permission.INTERNET"]);

    const got = await call(versionUrl("com.example.basic", "1.2.3"), { headers });
    expect(got.status).toBe(200);
    expect(got.body).toEqual(body);
    const head = await fetch(versionUrl("com.example.basic", "1.2.3"), { method: "HEAD", headers });
    expect(head.status).toBe(200);
  });

  it("accepts version identifiers with the allowed punctuation and reads ABIs and debuggable", async () => {
    const { status, body } = await upload(
      "com.example.abis",
      "2.0.0-beta+7",
      await fixture("app-debuggable-abis.apk"),
    );
    expect(status).toBe(201);
    expect(body.version).toBe("2.0.0-beta+7");
    expect(body.binary).toMatchObject({
      version_name: "2.0.0-beta+7",
      debuggable: true,
      abis: ["arm64-v8a", "x86_64"],
    });
  });

  it("reads IPAs with XML and binary Info.plist, and zipped .app bundles", async () => {
    for (const [version, file, format] of [
      ["3.1.0-xml", "ios-xml-plist.ipa", "ipa"],
      ["3.1.0-bin", "ios-binary-plist.ipa", "ipa"],
      ["3.1.0-app", "ios-app.zip", "app"],
    ] as const) {
      const { status, body } = await upload("com.example.iosapp", version, await fixture(file));
      expect(status, file).toBe(201);
      expect(body.binary, file).toMatchObject({
        format,
        platform: "ios",
        package_name: "com.example.iosapp",
        version_name: "3.1.0",
        version_code: "310",
        min_os_version: "15.0",
      });
    }
  });

  it("reads an AAB's protobuf manifest", async () => {
    const { status, body } = await upload("com.example.bundle", "1.0", await fixture("app-bundle.aab"));
    expect(status).toBe(201);
    expect(body.binary).toMatchObject({
      format: "aab",
      platform: "android",
      package_name: "com.example.bundle",
    });
  });

  it("refuses a binary that declares another package, naming both", async () => {
    const { status, body } = await upload(
      "com.example.basic",
      "9.9.9",
      await fixture("app-other-package.apk"),
    );
    expect(status).toBe(400);
    expect(body).toMatchObject({
      code: "binary_package_mismatch",
      binary_package_name: "com.example.other",
      package_name: "com.example.basic",
    });
    expect((await call(versionUrl("com.example.basic", "9.9.9"), { headers })).status).toBe(404);
  });

  it("refuses bytes that are no app binary, an empty body and a binary of the other platform", async () => {
    for (const file of ["not-a-binary.bin", "plain.zip"]) {
      const { status, body } = await upload("com.example.basic", "bad-1", await fixture(file));
      expect(status, file).toBe(400);
      expect(body.code, file).toBe("unsupported_binary");
    }
    const empty = await upload("com.example.basic", "bad-2", Buffer.alloc(0));
    expect(empty.status).toBe(400);
    expect(empty.body.code).toBe("unsupported_binary");

    const ipa = await upload("com.example.basic", "bad-3", await fixture("ios-xml-plist.ipa"));
    expect(ipa.status).toBe(400);
    expect(ipa.body).toMatchObject({ code: "unsupported_binary", reason: "platform_mismatch" });
    expect(await filesInDataDir()).not.toContainEqual(expect.stringMatching(/^tmp\//));
  });

  it("checks Content-Digest and keeps nothing when it does not match", async () => {
    const good = await upload("com.example.basic", "digest-ok", apk, {
      "content-digest": `sha-256=:${sha256(apk).toString("base64")}:`,
    });
    expect(good.status).toBe(201);
    const good512 = await upload("com.example.basic", "digest-512", apk, {
      "content-digest": `sha-512=:${createHash("sha512").update(apk).digest("base64")}:`,
    });
    expect(good512.status).toBe(201);

    const before = await filesInDataDir();
    const bad = await upload("com.example.basic", "digest-bad", apk, {
      "content-digest": `sha-256=:${sha256(Buffer.from("other")).toString("base64")}:`,
    });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("checksum_mismatch");
    expect(await filesInDataDir()).toEqual(before);
    expect((await call(versionUrl("com.example.basic", "digest-bad"), { headers })).status).toBe(404);

    const malformed = await upload("com.example.basic", "digest-malformed", apk, {
      "content-digest": "sha-256=abc",
    });
    expect(malformed.status).toBe(400);
    expect(malformed.body.code).toBe("invalid_request");
  });

  it("lets exactly one of several concurrent uploads of one version win", async () => {
    const before = await filesInDataDir();
    const results = await Promise.all(
      Array.from({ length: 6 }, () => upload("com.example.basic", "race-1", apk)),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([201, 409, 409, 409, 409, 409]);
    const after = await filesInDataDir();
    expect(after.filter((file) => !before.includes(file))).toHaveLength(1);
    // One version.uploaded, the winner's, with the version object the API answered it.
    const winner = results.find((r) => r.status === 201)?.body;
    const org = await server.app.services.database.db
      .selectFrom("organizations")
      .select("id")
      .where("name", "=", "acme")
      .executeTakeFirstOrThrow();
    const events = (
      await eventsOf(server.app.services.database.db, org.id, { type: "version.uploaded" })
    ).filter((event) => event.data.version === "race-1");
    expect(events.map((event) => event.data)).toEqual([winner]);
  });
});

describe("early answers, decided from the headers before the body is read", () => {
  async function answerToHeadersOnly(
    pkg: string,
    version: string,
    contentLength: number,
    expect100: boolean,
  ) {
    const connection = await RawConnection.open(server.origin);
    connection.send(
      `PUT /v1/apps/${pkg}/versions/${version} HTTP/1.1\r\nHost: x\r\nx-api-key: ${headers["x-api-key"]}\r\n` +
        `Content-Type: application/octet-stream\r\nContent-Length: ${contentLength}\r\n` +
        (expect100 ? "Expect: 100-continue\r\n" : "") +
        "\r\n",
    );
    // No body byte is sent: an answer can only come from the headers.
    const response = await connection.finalResponse();
    const closed = await connection.closedByServer();
    connection.destroy();
    return {
      ...response,
      closed,
      continued: connection.text.startsWith("HTTP/1.1 100"),
      sent: connection.bodyBytesSent,
    };
  }

  for (const expect100 of [false, true]) {
    const how = expect100 ? "with Expect: 100-continue" : "without Expect";

    it(`answers 409 for a registered version ${how}, and closes instead of draining`, async () => {
      const response = await answerToHeadersOnly("com.example.basic", "1.2.3", apk.length, expect100);
      expect(response.status).toBe(409);
      expect(response.json.code).toBe("app_version_exists");
      expect(response.json.fix).toMatch(/skip the upload/);
      expect(response.continued).toBe(false);
      expect(response.closed).toBe(true);
      expect(response.sent).toBe(0);
    });

    it(`answers 404 for an unknown app ${how}`, async () => {
      const response = await answerToHeadersOnly("com.example.nothere", "1.0", apk.length, expect100);
      expect(response.status).toBe(404);
      expect(response.json).toMatchObject({ code: "app_not_found", reason: "unknown" });
      expect(response.continued).toBe(false);
      expect(response.closed).toBe(true);
    });

    it(`answers 413 for a declared size over the limit ${how}, with the fixes`, async () => {
      const response = await answerToHeadersOnly("com.example.basic", "too-big", limit + 1, expect100);
      expect(response.status).toBe(413);
      expect(response.json).toMatchObject({ code: "file_size_exceeded", limit_bytes: limit });
      expect(response.json.fix).toMatch(/strip debug symbols/);
      expect(response.json.fix).toMatch(/split it by ABI/);
      expect(response.continued).toBe(false);
      expect(response.closed).toBe(true);
    });
  }

  it("sends 100 Continue for an upload it wants, then takes the body", async () => {
    const connection = await RawConnection.open(server.origin);
    connection.send(
      `PUT /v1/apps/com.example.basic/versions/continued HTTP/1.1\r\nHost: x\r\nx-api-key: ${headers["x-api-key"]}\r\n` +
        `Content-Length: ${apk.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    await connection.waitFor((received) => received.startsWith("HTTP/1.1 100 Continue\r\n\r\n"));
    await connection.sendBody(apk);
    const response = await connection.finalResponse();
    connection.destroy();
    expect(response.status).toBe(201);
    expect(response.json.sha256).toBe(sha256(apk).toString("hex"));
  });

  it("refuses an unauthenticated upload before the body too", async () => {
    const connection = await RawConnection.open(server.origin);
    connection.send(
      `PUT /v1/apps/com.example.basic/versions/anon HTTP/1.1\r\nHost: x\r\nContent-Length: ${apk.length}\r\nExpect: 100-continue\r\n\r\n`,
    );
    const response = await connection.finalResponse();
    connection.destroy();
    expect(response.status).toBe(401);
    expect(connection.text.startsWith("HTTP/1.1 100")).toBe(false);
  });
});

describe("bodies that go wrong on the way", () => {
  it("cuts a chunked body off at the limit with 413 and keeps nothing", async () => {
    const before = await filesInDataDir();
    const connection = await RawConnection.open(server.origin);
    connection.send(
      `PUT /v1/apps/com.example.basic/versions/chunked-big HTTP/1.1\r\nHost: x\r\nx-api-key: ${headers["x-api-key"]}\r\n` +
        "Transfer-Encoding: chunked\r\n\r\n",
    );
    const chunk = Buffer.alloc(32 * 1024, 7);
    // Up to twice the limit, stopping as soon as the server has answered.
    for (let sent = 0; sent < 2 * limit && connection.text === ""; sent += chunk.length) {
      await connection.sendBody(
        Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from("\r\n")]),
      );
    }
    const response = await connection.finalResponse();
    expect(response.status).toBe(413);
    expect(response.json).toMatchObject({ code: "file_size_exceeded", limit_bytes: limit });
    expect(await connection.closedByServer()).toBe(true);
    connection.destroy();
    expect((await call(versionUrl("com.example.basic", "chunked-big"), { headers })).status).toBe(404);
    expect(await filesInDataDir()).toEqual(before);
  });

  it("keeps no version and no file when the client disconnects mid-body", async () => {
    const before = await filesInDataDir();
    const connection = await RawConnection.open(server.origin);
    connection.send(
      `PUT /v1/apps/com.example.basic/versions/abandoned HTTP/1.1\r\nHost: x\r\nx-api-key: ${headers["x-api-key"]}\r\n` +
        `Content-Length: ${apk.length}\r\n\r\n`,
    );
    await connection.sendBody(apk.subarray(0, Math.floor(apk.length / 2)));
    // The server has staged part of the body once a staging file exists; then the client goes away.
    await waitUntil(async () => (await filesInDataDir()).some((file) => file.startsWith("tmp/uploads/")));
    connection.destroy();
    await waitUntil(async () => server.logs.some((line) => line.includes("upload abandoned by the client")));
    expect(await filesInDataDir()).toEqual(before);
    expect((await call(versionUrl("com.example.basic", "abandoned"), { headers })).status).toBe(404);
  });

  it("removes what a crashed server left behind when it starts again", async () => {
    const staging = path.join(server.config.dataDir, "tmp", "uploads");
    const blobs = path.join(server.config.dataDir, "blobs", "versions", "org_crashed");
    await mkdir(staging, { recursive: true });
    await mkdir(blobs, { recursive: true });
    await writeFile(path.join(staging, "blob_half-received.part"), "half a body");
    const anHourAgo = new Date(Date.now() - 60 * 60 * 1000);
    await utimes(path.join(staging, "blob_half-received.part"), anHourAgo, anHourAgo);
    // Another instance on the same data dir receiving an upload right now.
    await writeFile(path.join(staging, "blob_being-received.part"), "the first bytes");
    const orphan = newId("blob", server.clock.now() - 60 * 60 * 1000);
    const fresh = newId("blob", server.clock.now());
    await writeFile(path.join(blobs, orphan), "stored, never recorded");
    await writeFile(path.join(blobs, fresh), "an upload in flight on another instance");

    const restarted = await startTestServer({ shareWith: server, clock: server.clock });
    await restarted.close();
    const left = await filesInDataDir();
    expect(left).not.toContain("tmp/uploads/blob_half-received.part");
    expect(left).toContain("tmp/uploads/blob_being-received.part");
    await rm(path.join(staging, "blob_being-received.part"));
    expect(left).not.toContain(`blobs/versions/org_crashed/${orphan}`);
    expect(left).toContain(`blobs/versions/org_crashed/${fresh}`);
    // Recorded versions are untouched.
    expect((await call(versionUrl("com.example.basic", "1.2.3"), { headers })).status).toBe(200);
  });
});

/** Polls a condition the test cannot await directly (server-side cleanup), bounded in time. */
async function waitUntil(condition: () => Promise<boolean>, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error("condition not met in time");
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe("downloading a binary", () => {
  const binaryUrl = () => `${versionUrl("com.example.basic", "1.2.3")}/binary`;

  it("serves the whole binary with its checksum as ETag", async () => {
    const response = await fetch(binaryUrl(), { headers });
    expect(response.status).toBe(200);
    expect(response.headers.get("accept-ranges")).toBe("bytes");
    expect(response.headers.get("etag")).toBe(`"${sha256(apk).toString("hex")}"`);
    expect(Buffer.from(await response.arrayBuffer()).equals(apk)).toBe(true);
  });

  it("serves byte ranges with 206 and Content-Range", async () => {
    for (const [range, start, end] of [
      ["bytes=0-99", 0, 99],
      ["bytes=100-", 100, apk.length - 1],
      ["bytes=-10", apk.length - 10, apk.length - 1],
    ] as const) {
      const response = await fetch(binaryUrl(), { headers: { ...headers, range } });
      expect(response.status, range).toBe(206);
      expect(response.headers.get("content-range")).toBe(`bytes ${start}-${end}/${apk.length}`);
      expect(Buffer.from(await response.arrayBuffer()).equals(apk.subarray(start, end + 1))).toBe(true);
    }
  });

  it("answers 416 for a range past the end", async () => {
    const response = await call(binaryUrl(), { headers: { ...headers, range: `bytes=${apk.length}-` } });
    expect(response.status).toBe(416);
    expect(response.headers.get("content-range")).toBe(`bytes */${apk.length}`);
    expect(response.body.code).toBe("range_not_satisfiable");
  });

  it("lets agents download but not upload", async () => {
    const agent = { "x-api-key": await server.token(await server.createClient("acme", "agent")) };
    expect((await fetch(binaryUrl(), { headers: agent })).status).toBe(200);
    const refused = await fetch(versionUrl("com.example.basic", "by-agent"), {
      method: "PUT",
      headers: agent,
      body: apk,
    });
    expect(refused.status).toBe(403);
  });
});

describe("listing versions", () => {
  it("pages newest first without skipping or repeating, even while versions are added", async () => {
    await call(`${server.baseUrl}/apps`, {
      headers,
      json: { package_name: "com.example.paged", platform: "android" },
    });
    const other = await fixture("app-other-package.apk");
    await call(`${server.baseUrl}/apps`, {
      headers,
      json: { package_name: "com.example.other", platform: "android" },
    });
    const made: string[] = [];
    for (let i = 0; i < 7; i++) {
      server.clock.advance(1000);
      expect((await upload("com.example.other", `v${i}`, other)).status).toBe(201);
      made.push(`v${i}`);
    }
    const seen: string[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const query: string = cursor ? `?limit=3&cursor=${cursor}` : "?limit=3";
      const page = await call(`${server.baseUrl}/apps/com.example.other/versions${query}`, { headers });
      expect(page.status).toBe(200);
      seen.push(...page.body.items.map((item: { version: string }) => item.version));
      cursor = page.body.next_cursor;
      if (pages++ === 0) {
        // A newer version lands between pages: it belongs before page one, so later pages do not change.
        server.clock.advance(1000);
        expect((await upload("com.example.other", "v-late", other)).status).toBe(201);
      }
    } while (cursor && pages < 10);
    expect(seen).toEqual([...made].reverse());
  });

  it("rejects a cursor it did not hand out", async () => {
    const response = await call(`${server.baseUrl}/apps/com.example.basic/versions?cursor=bm9wZQ`, {
      headers,
    });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe("invalid_request");
  });
});

describe("hostile package names and versions", () => {
  const names = [
    "..",
    "%2e%2e",
    "com.example%2F..%2F..%2Fetc",
    "com.example/../../etc",
    "com..example",
    ".hidden",
    "trailing.",
    "com.exämple",
    "%F0%9F%92%A5",
    "a".repeat(10_000),
    "com.example.basic%00",
    "com example",
  ];
  const versions = [
    "..",
    "%2e%2e",
    "..%2F..%2Fx",
    "1.0%2F..",
    "-1",
    "+1",
    ".1",
    "1 0",
    "v".repeat(10_000),
    "%00",
    "ü",
  ];

  it("answers 400 or 404 for every one, never 5xx, and writes nothing outside the blob store", async () => {
    const before = await filesInDataDir();
    for (const name of names) {
      for (const [method, url] of [
        ["GET", `${server.baseUrl}/apps/${name}`],
        ["GET", `${server.baseUrl}/apps/${name}/versions`],
        ["PUT", `${server.baseUrl}/apps/${name}/versions/1.0`],
        ["GET", `${server.baseUrl}/apps/${name}/versions/1.0/binary`],
      ] as const) {
        const response = await fetch(url, { method, headers, body: method === "PUT" ? apk : undefined });
        // fetch resolves dot segments as every URL parser does: `/v1/apps/..` is sent as `/v1/`, the API's
        // index (GET /v1), which answers 200 with links and touches nothing.
        const indexReached = method === "GET" && new URL(url).pathname === "/v1/";
        expect(indexReached ? [200] : [400, 404], `${method} ${url.slice(0, 120)}`).toContain(
          response.status,
        );
      }
      const created = await call(`${server.baseUrl}/apps`, {
        headers,
        json: { package_name: safeDecode(name), platform: "android" },
      });
      expect(created.status, name.slice(0, 50)).toBe(400);
    }
    for (const version of versions) {
      const put = await fetch(versionUrlRaw("com.example.basic", version), {
        method: "PUT",
        headers,
        body: apk,
      });
      expect([400, 404], version.slice(0, 50)).toContain(put.status);
      const get = await fetch(`${versionUrlRaw("com.example.basic", version)}/binary`, { headers });
      expect([400, 404], version.slice(0, 50)).toContain(get.status);
    }
    expect(await filesInDataDir()).toEqual(before);
  });

  function versionUrlRaw(pkg: string, version: string) {
    return `${server.baseUrl}/apps/${pkg}/versions/${version}`;
  }

  function safeDecode(text: string): string {
    try {
      return decodeURIComponent(text);
    } catch {
      return text;
    }
  }
});
