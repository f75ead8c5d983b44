// Several instances of the server on one database sign tokens with one key, so each accepts the others':
// the configured TESTBAY_SIGNING_KEY, or the key the first of them generated and kept in the database. Moved
// here from the admin CLI's suite (issue 26), where each instance was a `testbay-server start` process: now
// one is, and the others are started as `start` starts them (main.ts startServer) in this process. Not all of
// them in this process: two SQLite stores in one thread that start at once deadlock (each migration waits,
// blocking the thread, for a lock the other holds, until "database is locked").
import { createPublicKey, generateKeyPairSync } from "node:crypto";
import { compactVerify } from "jose";
import { describe, expect, it } from "vitest";
import {
  accessToken,
  createClientWithCli,
  createWorkspace,
  me,
  spawnServer,
  startInProcess,
  useCliSuite,
} from "./cli-harness.ts";

useCliSuite();

describe("signing keys across instances on one database", () => {
  it("with TESTBAY_SIGNING_KEY, both instances sign with that key and accept each other's tokens", async () => {
    const ws = await createWorkspace();
    const pem = generateKeyPairSync("ed25519").privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const ci = await createClientWithCli(ws.env, "acme", "ci");
    // The database is migrated and not empty by now, so the two may start together.
    const env = { ...ws.env, TESTBAY_SIGNING_KEY: pem };
    const [a, b] = await Promise.all([spawnServer(env), startInProcess(env)]);
    expect(a.url).not.toBe(b.url);

    const fromA = await accessToken(a.url, ci);
    const fromB = await accessToken(b.url, ci);
    expect((await me(b.url, fromA)).status).toBe(200);
    expect((await me(a.url, fromB)).status).toBe(200);
    // Signed by the configured key, not by one the server made up.
    await expect(compactVerify(fromA, createPublicKey(pem))).resolves.toBeDefined();
    await expect(compactVerify(fromB, createPublicKey(pem))).resolves.toBeDefined();
  });

  it("without TESTBAY_SIGNING_KEY, instances share the key generated once in the database", async () => {
    const ws = await createWorkspace();
    const ci = await createClientWithCli(ws.env, "acme", "ci");
    // Both start at once on a database that has no key yet: both try to create it, one wins.
    const [a, b] = await Promise.all([spawnServer(ws.env), startInProcess(ws.env)]);

    const fromA = await accessToken(a.url, ci);
    const fromB = await accessToken(b.url, ci);
    expect((await me(b.url, fromA)).status).toBe(200);
    expect((await me(a.url, fromB)).status).toBe(200);

    // A third instance, started later, accepts them too.
    const c = await startInProcess(ws.env);
    expect((await me(c.url, fromA)).status).toBe(200);
  });
});
