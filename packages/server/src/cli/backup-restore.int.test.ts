// `testbay-server backup --to DIR` and `restore --from DIR` (API.md §15; backup/): a running server's embedded
// store copied while an agent writes results, restored into an empty data dir and served again; and every
// refusal, with what it says and its exit code (docs/operating.md, "Backups").

import { createHash, randomBytes } from "node:crypto";
import { mkdir, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { createInterface } from "node:readline";
import { describe, expect, it } from "vitest";
import {
  accessToken,
  createStore,
  type Env,
  root,
  runCli,
  severalRunsMs,
  spawnBinary,
  spawnServer,
  startInProcess,
  useCliSuite,
  withTimeout,
} from "../../test/cli-harness.ts";
import { call, registerBasicApp, type TestServer } from "../../test/harness.ts";
import type { Manifest } from "../backup/manifest.ts";
import { migrations } from "../db/migrations/index.ts";

useCliSuite();

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");
const finished = new Set(["passed", "failed", "errored", "cancelled"]);

/** A new data dir under the suite's root, for the embedded default (SQLite and blobs inside it). */
async function embeddedEnv(): Promise<Env> {
  const dataDir = await mkdtemp(path.join(root, "data-"));
  return {
    TESTBAY_DATA_DIR: dataDir,
    TESTBAY_PORT: "0",
    TESTBAY_LOCAL_AGENT: "false",
    // The test's ci client triggers as fast as the agent runs, far past a CI pipeline's pace.
    TESTBAY_RATE_LIMIT_BURST: "1000",
    TESTBAY_RATE_LIMIT_PER_SECOND: "1000",
  };
}

/** The ci and agent clients the first start wrote to `<data dir>/credentials.json`, as request headers. */
async function clientHeaders(baseUrl: string, dataDir: string) {
  const saved = JSON.parse(await readFile(path.join(dataDir, "credentials.json"), "utf8"));
  return {
    ci: { "x-api-key": await accessToken(baseUrl, saved.ci) },
    agent: { "x-api-key": await accessToken(baseUrl, saved.agent) },
  };
}

type Headers = Awaited<ReturnType<typeof clientHeaders>>;

/**
 * One execution from trigger to `passed`, as an agent reports it over HTTP: log lines, a test case and
 * `artifacts` random files of `artifactBytes` each.
 */
async function runOneExecution(
  baseUrl: string,
  headers: Headers,
  planId: string,
  index: number,
  artifacts: number,
  artifactBytes: number,
): Promise<string> {
  const run = await call(`${baseUrl}/testplan/run`, {
    headers: headers.ci,
    json: { test_plan_id: planId, package_name: "com.example.basic", version: "1.2.3" },
  });
  expect(run.status, JSON.stringify(run.body)).toBe(200);
  const claimed = await call(`${baseUrl}/agent/claim`, {
    headers: headers.agent,
    json: {
      agent_id: "rack-1",
      devices: [{ serial: "emulator-5554", platform: "android", model: "Pixel 7", os_version: "14" }],
      step_types: ["maestro"],
    },
  });
  expect(claimed.status).toBe(200);
  const lease = claimed.body.job.lease_id;
  const at = new Date().toISOString();
  const sent = await call(`${baseUrl}/agent/jobs/${lease}/events`, {
    headers: headers.agent,
    json: {
      events: [
        { seq: 1, type: "log", at, stream: "stdout", line: `execution ${index} starts` },
        { seq: 2, type: "log", at, stream: "stdout", line: `execution ${index} ${"x".repeat(200)}` },
        {
          seq: 3,
          type: "test_case",
          step_index: 0,
          classname: "com.example.CartTest",
          name: `adds item ${index}`,
          status: "passed",
          retry: 0,
          duration_ms: 1000,
          message: null,
        },
      ],
    },
  });
  expect(sent.status).toBe(200);
  for (let artifact = 0; artifact < artifacts; artifact++) {
    const put = await fetch(`${baseUrl}/agent/jobs/${lease}/artifacts/screen-${artifact}.bin`, {
      method: "PUT",
      headers: { ...headers.agent, "content-type": "application/octet-stream" },
      body: randomBytes(artifactBytes),
    });
    expect(put.status).toBe(201);
  }
  const done = await call(`${baseUrl}/agent/jobs/${lease}/complete`, {
    headers: headers.agent,
    json: { status: "passed" },
  });
  expect(done.status).toBe(200);
  return run.body.execution.id;
}

interface ExecutionRecord {
  status: string;
  log: string;
  /** Artifact name → SHA-256 of its bytes as served. */
  artifacts: Record<string, string>;
}

/** Every execution a server holds, with its log and its artifacts' hashes, read through the API. */
async function executionsOf(
  baseUrl: string,
  ci: Record<string, string>,
): Promise<Map<string, ExecutionRecord>> {
  const listed = await call(`${baseUrl}/executions?limit=200`, { headers: ci });
  expect(listed.status).toBe(200);
  expect(listed.body.next_cursor).toBeNull();
  const records = new Map<string, ExecutionRecord>();
  const read = async (execution: { id: string; status: string }) => {
    const log = await fetch(`${baseUrl}/executions/${execution.id}/log`, { headers: ci });
    expect(log.status).toBe(200);
    const artifactList = await call(`${baseUrl}/executions/${execution.id}/artifacts`, { headers: ci });
    expect(artifactList.status).toBe(200);
    const artifacts: Record<string, string> = {};
    for (const { name } of artifactList.body.items as Array<{ name: string }>) {
      const body = await fetch(`${baseUrl}/executions/${execution.id}/artifacts/${name}`, { headers: ci });
      expect(body.status, `${execution.id}/${name}`).toBe(200);
      artifacts[name] = sha256(Buffer.from(await body.arrayBuffer()));
    }
    records.set(execution.id, { status: execution.status, log: await log.text(), artifacts });
  };
  await Promise.all((listed.body.items as Array<{ id: string; status: string }>).map(read));
  return records;
}

/** Every file under `dir`, relative: what a refused restore must not have written. */
async function filesUnder(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { recursive: true }).catch((error: NodeJS.ErrnoException) => {
    if (error.code === "ENOENT") return [];
    throw error;
  });
  return entries.sort();
}

describe("testbay-server backup and restore", () => {
  it(
    "copies a running server's store while an agent writes results; the restored server serves every execution, log, artifact and binary",
    async () => {
      const env = await embeddedEnv();
      const server = await spawnServer(env);
      const headers = await clientHeaders(server.url, env.TESTBAY_DATA_DIR as string);
      // registerBasicApp needs only the base URL of a server.
      await registerBasicApp({ baseUrl: server.url } as TestServer, headers.ci);
      const plan = await call(`${server.url}/testplans`, {
        headers: headers.ci,
        json: {
          name: "nightly",
          package_name: "com.example.basic",
          devices: [{ platform: "android", model: "Pixel 7" }],
          steps: [{ type: "maestro", flows: ["appId: com.example.basic\n---\n- launchApp\n"] }],
        },
      });
      expect(plan.status).toBe(201);
      // Some MiB of blobs before the backup, so that copying them takes a while the agent goes on writing in.
      const before: string[] = [];
      for (let index = 0; index < 3; index++) {
        before.push(await runOneExecution(server.url, headers, plan.body.id, index, 4, 1024 * 1024));
      }

      const backupDir = path.join(root, "backup-1");
      const backup = spawnBinary(["backup", "--to", backupDir], env);
      const backupStderr: string[] = [];
      let copying = false;
      let backupEnded = false;
      createInterface({ input: backup.child.stderr }).on("line", (line) => {
        backupStderr.push(line);
        if (line.startsWith("Copying the database")) copying = true;
      });
      const backupExit = backup.exit.then((code) => {
        backupEnded = true;
        return code;
      });
      // The agent goes on while the backup runs: results and artifacts land during the copy.
      let whileCopying = 0;
      for (let index = 100; index < 250 && !backupEnded; index++) {
        await runOneExecution(server.url, headers, plan.body.id, index, 1, 64 * 1024);
        if (copying && !backupEnded) whileCopying++;
      }
      const code = await withTimeout(backupExit, "testbay-server backup");
      expect(code, backupStderr.join("\n")).toBe(0);
      expect(whileCopying).toBeGreaterThan(0);
      expect(backupStderr[0]).toBe(
        `using data dir ${env.TESTBAY_DATA_DIR} (SQLite ${env.TESTBAY_DATA_DIR}/testbay.db)`,
      );
      expect(backupStderr.at(-2)).toMatch(
        new RegExp(`^Backup written to ${backupDir}: \\d+ files, [\\d.]+ MiB`),
      );
      const after = await runOneExecution(server.url, headers, plan.body.id, 999, 1, 1024);

      const original = await executionsOf(server.url, headers.ci);

      const uploaded = await fetch(`${server.url}/apps/com.example.basic/versions/1.2.3/binary`, {
        headers: headers.ci,
      });
      const uploadedBinarySha256 = sha256(Buffer.from(await uploaded.arrayBuffer()));
      expect(await server.stop()).toBe(0);

      const manifest: Manifest = JSON.parse(await readFile(path.join(backupDir, "manifest.json"), "utf8"));
      expect(manifest.schema_version).toBe(Object.keys(migrations).sort().at(-1));
      expect(manifest.files.map((file) => file.path)).toEqual(
        expect.arrayContaining([
          "testbay.db",
          "credentials.json",
          expect.stringMatching(/^blobs\/artifacts\//),
        ]),
      );

      const restoredEnv = await embeddedEnv();
      const restore = await runCli(["restore", "--from", backupDir], restoredEnv);
      expect(restore.code, restore.stderr).toBe(0);
      expect(restore.stderr).toContain(`into ${restoredEnv.TESTBAY_DATA_DIR}`);
      expect(restore.stderr).toContain(
        `TESTBAY_DATA_DIR=${restoredEnv.TESTBAY_DATA_DIR} testbay-server start`,
      );
      // In this process: the server that matters here is the one the backup was taken from.
      const restoredServer = await startInProcess(restoredEnv);
      const restoredHeaders = await clientHeaders(restoredServer.url, restoredEnv.TESTBAY_DATA_DIR as string);
      const restored = await executionsOf(restoredServer.url, restoredHeaders.ci);
      const binary = await fetch(`${restoredServer.url}/apps/com.example.basic/versions/1.2.3/binary`, {
        headers: restoredHeaders.ci,
      });
      expect(binary.status).toBe(200);
      expect(sha256(Buffer.from(await binary.arrayBuffer()))).toBe(uploadedBinarySha256);
      await restoredServer.stop();

      // Everything that was there before the backup began is there, the same to the byte.
      for (const id of before) expect(restored.get(id), id).toEqual(original.get(id));
      expect(restored.has(after)).toBe(false);
      for (const [id, copy] of restored) {
        const source = original.get(id);
        expect(source, id).toBeDefined();
        if (!source) continue;
        if (finished.has(copy.status)) {
          expect(copy, id).toEqual(source);
        } else {
          // Caught mid-run by the snapshot: what it had then, each artifact equal to the original's.
          for (const [name, hash] of Object.entries(copy.artifacts))
            expect(hash, `${id}/${name}`).toBe(source.artifacts[name]);
          expect(source.log.startsWith(copy.log), id).toBe(true);
        }
      }
    },
    severalRunsMs,
  );
});

/** A small store with one blob, backed up in this process: what the refusals below are tried on. */
async function smallBackup(): Promise<string> {
  const ws = await createStore();
  const blob = path.join(ws.dataDir, "blobs", "artifacts", "ex_1", "blob_1");
  await mkdir(path.dirname(blob), { recursive: true });
  await writeFile(blob, randomBytes(4096));
  const backupDir = await mkdtemp(path.join(root, "backup-"));
  const made = await runCli(["backup", "--to", backupDir], ws.env);
  expect(made.code, made.stderr).toBe(0);
  return backupDir;
}

describe("testbay-server backup refuses", () => {
  it("a --to directory that has files, or one inside the blob directory, exit 2, writing nothing", async () => {
    const ws = await createStore();
    const used = await mkdtemp(path.join(root, "used-"));
    await writeFile(path.join(used, "older-backup.txt"), "keep");
    const intoUsed = await runCli(["backup", "--to", used], ws.env);
    expect(intoUsed.code).toBe(2);
    expect(intoUsed.stderr).toContain(
      `testbay-server: ${used} is not empty: give --to a new or empty directory`,
    );
    expect(await filesUnder(used)).toEqual(["older-backup.txt"]);
    const intoBlobs = await runCli(["backup", "--to", path.join(ws.dataDir, "blobs", "backup")], ws.env);
    expect(intoBlobs.code).toBe(2);
    expect(intoBlobs.stderr).toContain("is inside the blob directory");
    expect(await filesUnder(path.join(ws.dataDir, "blobs"))).toEqual([]);
  });
});

describe("testbay-server restore refuses", () => {
  it("a backup with one byte changed, exit 3, naming the file and writing nothing", async () => {
    const backupDir = await smallBackup();
    const blob = path.join(backupDir, "blobs", "artifacts", "ex_1", "blob_1");
    const bytes = await readFile(blob);
    bytes[100] = (bytes[100] ?? 0) ^ 1;
    await writeFile(blob, bytes);
    const target = await embeddedEnv();
    const result = await runCli(["restore", "--from", backupDir], target);
    expect(result.code).toBe(3);
    expect(result.stderr).toMatch(/does not match its manifest .*nothing was restored/);
    expect(result.stderr).toMatch(
      /^ {2}blobs\/artifacts\/ex_1\/blob_1: sha256 [0-9a-f]{64}, the manifest says/m,
    );
    expect(await filesUnder(target.TESTBAY_DATA_DIR as string)).toEqual([]);
  });

  it("a backup with a file removed or added, exit 3, naming both and writing nothing", async () => {
    const backupDir = await smallBackup();
    await rm(path.join(backupDir, "blobs", "artifacts", "ex_1", "blob_1"));
    await writeFile(path.join(backupDir, "notes.txt"), "added later");
    const target = await embeddedEnv();
    const result = await runCli(["restore", "--from", backupDir], target);
    expect(result.code).toBe(3);
    expect(result.stderr).toContain("  blobs/artifacts/ex_1/blob_1: missing from the backup");
    expect(result.stderr).toContain("  notes.txt: in the backup but not in manifest.json");
    expect(await filesUnder(target.TESTBAY_DATA_DIR as string)).toEqual([]);
  });

  it("a backup from a newer schema, exit 2, naming both schemas", async () => {
    const backupDir = await smallBackup();
    const file = path.join(backupDir, "manifest.json");
    const manifest: Manifest = JSON.parse(await readFile(file, "utf8"));
    const newest = manifest.schema_version;
    await writeFile(file, JSON.stringify({ ...manifest, schema_version: "2999-01-01-0001-from-the-future" }));
    const target = await embeddedEnv();
    const result = await runCli(["restore", "--from", backupDir], target);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `the backup is from a newer Testbay: its database has migration 2999-01-01-0001-from-the-future, and this testbay-server knows migrations up to ${newest}.`,
    );
    expect(await filesUnder(target.TESTBAY_DATA_DIR as string)).toEqual([]);
  });

  it("a data dir that is not empty, exit 2, leaving it as it was", async () => {
    const backupDir = await smallBackup();
    const target = await embeddedEnv();
    await writeFile(path.join(target.TESTBAY_DATA_DIR as string, "keep.txt"), "mine");
    const result = await runCli(["restore", "--from", backupDir], target);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `restore writes into an empty data dir only, and ${target.TESTBAY_DATA_DIR} holds keep.txt.`,
    );
    expect(await filesUnder(target.TESTBAY_DATA_DIR as string)).toEqual(["keep.txt"]);
  });

  it("a directory without manifest.json (no backup, or one that did not finish), exit 2", async () => {
    const result = await runCli(["restore", "--from", root], await embeddedEnv());
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      `${root} has no manifest.json: it is not a Testbay backup, or a backup that did not finish`,
    );
  });
});

describe("on PostgreSQL or S3, backup and restore point to the tools for them", () => {
  it("says pg_dump for a PostgreSQL database and exits 2, for both commands", async () => {
    const ws = await createStore("postgres");
    const backupDir = path.join(root, "pg-backup");
    const backup = await runCli(["backup", "--to", backupDir], ws.env);
    expect(backup.code).toBe(2);
    expect(backup.stderr).toMatch(/^testbay-server: backup works on the embedded store only .*pg_dump/m);
    expect(await filesUnder(backupDir)).toEqual([]);
    const restore = await runCli(["restore", "--from", backupDir], ws.env);
    expect(restore.code).toBe(2);
    expect(restore.stderr).toMatch(/^testbay-server: restore works on the embedded store only .*pg_restore/m);
  });

  it("says bucket versioning for S3 blobs and exits 2", async () => {
    const env = {
      ...(await embeddedEnv()),
      TESTBAY_STORAGE_URL: "s3://testbay-blobs?endpoint=http://127.0.0.1:9&region=us-east-1",
    };
    const result = await runCli(["backup", "--to", path.join(root, "s3-backup")], env);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("blobs are in S3 (s3://testbay-blobs): turn on the bucket's versioning");
  });
});
