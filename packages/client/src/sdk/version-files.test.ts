// The version file upload's decisions (HEAD first, skip, refuse another file under the name, 409 or a retry
// judged by sha256) against a scripted server.
import { createHash } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { problem, ScriptedServer } from "../../test/scripted-server.ts";
import { Testbay } from "./client.ts";
import { FakeClock, seededRandom } from "./clock.ts";
import { TestbayApiError } from "./errors.ts";

const pkg = "com.example.basic";
const filePath = `/apps/${pkg}/versions/1.2.3/files/users.json`;
const bytes = Buffer.from('{"users": ["ada", "grace"]}\n');
const sha = createHash("sha256").update(bytes).digest("hex");
const otherSha = "cd".repeat(32);
const stored = (sha256: string) => ({
  name: "users.json",
  size_bytes: bytes.length,
  sha256,
  created_at: "2026-11-28T00:00:00.000Z",
});
const present = (sha256: string) => ({ status: 200, headers: { etag: `"${sha256}"` } });

let dir: string;
let local: string;
let server: ScriptedServer;

const sdk = () =>
  new Testbay({
    baseUrl: server.baseUrl,
    clientId: "cl_ci",
    clientSecret: "secret",
    clock: new FakeClock(),
    random: seededRandom(3),
  });
const upload = () =>
  sdk().versionFiles.upload({ packageName: pkg, version: "1.2.3", name: "users.json", file: local });

async function refusal(promise: Promise<unknown>): Promise<TestbayApiError> {
  const error = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(TestbayApiError);
  return error as TestbayApiError;
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-version-files-"));
  local = path.join(dir, "users.json");
  await writeFile(local, bytes);
});
afterAll(() => rm(dir, { recursive: true, force: true }));
beforeEach(async () => {
  server = new ScriptedServer();
  await server.start();
});
afterEach(() => server.close());

describe("versionFiles.upload", () => {
  it("asks with HEAD, then streams the file once when the version has none by that name", async () => {
    server
      .script(`HEAD ${filePath}`, { status: 404 })
      .script(`PUT ${filePath}`, { status: 201, body: stored(sha) });
    const result = await upload();
    expect(result).toEqual({ outcome: "uploaded", name: "users.json", sha256: sha, sizeBytes: bytes.length });
    expect(server.requests(`PUT ${filePath}`).map((put) => put.bodySha256)).toEqual([sha]);
  });

  it("skips the transfer when the stored file's ETag is this file's sha256", async () => {
    server.script(`HEAD ${filePath}`, present(sha));
    expect((await upload()).outcome).toBe("skipped");
    expect(server.count(`PUT ${filePath}`)).toBe(0);
  });

  it("refuses another file under the name before sending it, saying what to do", async () => {
    server.script(`HEAD ${filePath}`, present(otherSha));
    const error = await refusal(upload());
    expect(error.code).toBe("version_file_exists");
    expect(error.reason).toBe("different_file");
    expect(error.detail).toContain(`another file named users.json (sha256 ${otherSha.slice(0, 12)}…)`);
    expect(error.fix).toContain(`--extra-file users.json=${local}`);
    expect(server.count(`PUT ${filePath}`)).toBe(0);
  });

  it("takes a 409 for a stored file equal to this one as an earlier attempt that landed", async () => {
    server
      .script(`HEAD ${filePath}`, { status: 404 }, present(sha))
      .script(`PUT ${filePath}`, problem(409, "version_file_exists"));
    expect((await upload()).outcome).toBe("already_landed");
  });

  it("asks before resending after a 502, and does not send the file again when it landed", async () => {
    server
      .script(`HEAD ${filePath}`, { status: 404 }, present(sha))
      .script(`PUT ${filePath}`, problem(502, "bad_gateway"));
    expect((await upload()).outcome).toBe("already_landed");
    expect(server.count(`PUT ${filePath}`)).toBe(1);
  });

  it("passes an unknown version's 404 on rather than taking it for a missing file", async () => {
    server
      .script(`HEAD ${filePath}`, { status: 404 })
      .script(`PUT ${filePath}`, problem(404, "app_version_not_found"));
    expect((await refusal(upload())).code).toBe("app_version_not_found");
  });

  it("refuses a name outside [A-Za-z0-9._-] before any request", async () => {
    const error = await refusal(
      sdk().versionFiles.upload({ packageName: pkg, version: "1.2.3", name: "my users.json", file: local }),
    );
    expect(error.code).toBe("invalid_request");
    expect(error.fix).toContain(`--extra-file my_users.json=${local}`);
    expect(server.received).toEqual([]);
  });
});
