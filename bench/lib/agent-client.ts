// An agent client for a benchmark's Testbay (lib/opening.ts), made as an operator makes one:
// `testbay-server client create --role agent` on the server's data dir and database. bench/servers/testbay.ts
// makes only the ci client; claim.bench.ts makes its agents' client the same way.
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import type { TestbayOpening } from "./opening.ts";
import { repoRoot } from "./paths.ts";

const cliEntry = path.join(repoRoot, "packages/server/bin/testbay-server.js");

/** The new agent client's credentials, in organization `bench` (the one bench/servers/testbay.ts makes). */
export async function createAgentClient(
  testbay: Pick<TestbayOpening, "dataDir" | "databaseUrl">,
): Promise<{ client_id: string; client_secret: string }> {
  // The server's own TESTBAY_* settings are not this process's: only the store is named.
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(process.env)) if (!key.startsWith("TESTBAY_")) env[key] = value;
  env.TESTBAY_DATA_DIR = testbay.dataDir;
  if (testbay.databaseUrl !== undefined) env.TESTBAY_DATABASE_URL = testbay.databaseUrl;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [cliEntry, "client", "create", "--org", "bench", "--role", "agent"],
    { cwd: repoRoot, env, timeout: 60_000, encoding: "utf8" },
  );
  const created = JSON.parse(stdout) as { client_id?: string; client_secret?: string; role?: string };
  if (!created.client_id || !created.client_secret || created.role !== "agent") {
    throw new Error(`testbay-server client create printed ${stdout.slice(0, 300)}`);
  }
  return { client_id: created.client_id, client_secret: created.client_secret };
}
