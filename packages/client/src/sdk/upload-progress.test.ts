// Rule 11: a retried upload reports progress once per attempt. A body stream of an abandoned attempt that is
// still read afterwards (a fetch draining it, a late pipe) must not report into the next attempt's output.
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { Testbay } from "./client.ts";
import { FakeClock, seededRandom } from "./clock.ts";
import type { UploadProgress } from "./upload.ts";

let dir: string;
let file: string;
const size = 3 * 256 * 1024;

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-progress-"));
  file = path.join(dir, "app.apk");
  await writeFile(file, Buffer.alloc(size, 1));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

it("reports nothing from an abandoned attempt once the next one started", async () => {
  const bodies: AsyncIterator<Uint8Array>[] = [];
  let puts = 0;
  const fetch = async (input: string, init: RequestInit): Promise<Response> => {
    const url = new URL(input);
    if (url.pathname.endsWith("/oauth/token"))
      return Response.json({ access_token: "t", token_type: "api-key", expires_in: 3600 });
    if (init.method === "HEAD") return new Response(null, { status: 404 });
    if (url.pathname.endsWith("/me")) return Response.json({ limits: { max_upload_bytes: 10 * size } });
    if (init.method === "GET")
      return new Response(JSON.stringify({ code: "app_version_not_found" }), { status: 404 });
    puts += 1;
    const body = (init.body as unknown as AsyncIterable<Uint8Array>)[Symbol.asyncIterator]();
    bodies.push(body);
    if (puts === 1) {
      // The first attempt sends one chunk, then its connection drops.
      await body.next();
      throw new TypeError("fetch failed", {
        cause: Object.assign(new Error("reset"), { code: "ECONNRESET" }),
      });
    }
    // The second attempt: the abandoned first stream is read on meanwhile (as a late reader would).
    await body.next();
    for (let first = await bodies[0]?.next(); first && !first.done; first = await bodies[0]?.next()) {}
    for (let next = await body.next(); !next.done; next = await body.next()) {}
    return Response.json(
      {
        package_name: "com.example",
        version: "1",
        size_bytes: size,
        sha256: "x",
        created_at: "",
        binary: {},
      },
      { status: 201 },
    );
  };
  const seen: UploadProgress[] = [];
  const testbay = new Testbay({
    baseUrl: "http://testbay.test/v1",
    clientId: "c",
    clientSecret: "s",
    fetch,
    clock: new FakeClock(),
    random: seededRandom(1),
  });
  const result = await testbay.versions.upload({
    packageName: "com.example",
    version: "1",
    file,
    onProgress: (p) => seen.push(p),
  });
  expect(result.outcome).toBe("uploaded");
  expect(puts).toBe(2);
  const attempts = seen.map((p) => p.attempt);
  // Attempt 0 until attempt 1 begins, then only attempt 1: never back to 0.
  expect(attempts.indexOf(1)).toBeGreaterThan(0);
  expect(attempts.slice(attempts.indexOf(1)).every((a) => a === 1)).toBe(true);
  const last = seen.at(-1);
  expect(last).toEqual({ sentBytes: size, totalBytes: size, attempt: 1 });
});
