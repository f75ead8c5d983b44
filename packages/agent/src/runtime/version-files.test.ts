import { createHash } from "node:crypto";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import type { Testbay } from "@testbay/client";
import { describe, expect, it } from "vitest";
import { BinaryCache } from "./binary-cache.ts";
import { versionFileGetter } from "./version-files.ts";

const bytes = Buffer.from('{"users":["ann"]}');
const sha256 = createHash("sha256").update(bytes).digest("hex");
const job = {
  lease_id: "lease-1",
  version_files: [
    {
      name: "users.json",
      size_bytes: bytes.length,
      sha256,
      url: "http://x/v1/agent/jobs/lease-1/files/users.json",
    },
  ],
};

function fakeClient(body: Buffer) {
  const paths: string[] = [];
  const client = {
    transport: {
      send: async (call: { path: string }) => {
        paths.push(call.path);
        return new Response(body);
      },
    },
  } as unknown as Pick<Testbay, "transport">;
  return { client, paths };
}

describe("versionFileGetter", () => {
  it("downloads a version file once from the lease's files, checked by its sha256", async () => {
    const { client, paths } = fakeClient(bytes);
    const get = versionFileGetter(job, client, new BinaryCache(mkdtempSync(path.join(tmpdir(), "cache-"))));
    const [first, again] = await Promise.all([get("users.json"), get("users.json")]);
    expect(first).toBe(again);
    expect(readFileSync(first, "utf8")).toBe('{"users":["ann"]}');
    expect(paths).toEqual(["/agent/jobs/lease-1/files/users.json"]);
  });

  it("refuses bytes that are not the file the server described", async () => {
    const { client } = fakeClient(Buffer.from("something else"));
    const get = versionFileGetter(job, client, new BinaryCache(mkdtempSync(path.join(tmpdir(), "cache-"))));
    await expect(get("users.json")).rejects.toThrow(/SHA-256/);
  });

  it("says how to upload a file the version does not have", async () => {
    const { client, paths } = fakeClient(bytes);
    const get = versionFileGetter(job, client, new BinaryCache(mkdtempSync(path.join(tmpdir(), "cache-"))));
    await expect(get("seed.db")).rejects.toThrow("testbay upload --extra-file seed.db=PATH");
    expect(paths).toEqual([]);
  });
});
