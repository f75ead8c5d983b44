import { mkdir, readFile, rename, writeFile } from "node:fs/promises";
import path from "node:path";
import { Agent } from "@testbay/agent";
import { Testbay, TestbayApiError } from "@testbay/client";
import type { FastifyInstance } from "fastify";
import type { Config } from "../../config.ts";
import { privateDirMode } from "../../fs-permissions.ts";
import type { ClientsService } from "../clients/index.ts";

interface LocalAgentCredentials {
  client_id: string;
  client_secret: string;
}

/** `<data dir>/local-agent.json`: one agent client per organization, by organization name. */
type CredentialsFile = Record<string, LocalAgentCredentials>;

/** The name of the local agent's client in every organization (features/clients: client names). */
export const localAgentClientName = "Built-in local agent";

/** How often organizations made since start (testbay-server org create, in another process) are looked for. */
const newOrganizationCheckMs = 30_000;

/**
 * The embedded default's built-in agent: a `testbay-agent` running in this process for plans that need no
 * device, so a fresh install runs a plan to the end with nothing else installed. It serves every
 * organization of the server (one agent client each, since an agent client belongs to one organization),
 * including organizations created while it runs. It talks to this server over HTTP like any agent (same
 * protocol, same limits); the credentials live in `<data dir>/local-agent.json` (0600). Inspect steps only,
 * unless TESTBAY_LOCAL_AGENT_SHELL=true.
 */
export async function startLocalAgent(
  app: FastifyInstance,
  config: Config,
  clients: ClientsService,
  baseUrl: string,
): Promise<Agent[]> {
  const file = path.join(config.dataDir, "local-agent.json");
  const saved = await readCredentials(file);
  const agents = new Map<string, Agent>();
  const connect = (credentials: LocalAgentCredentials) =>
    new Testbay({
      baseUrl,
      clientId: credentials.client_id,
      clientSecret: credentials.client_secret,
      audience: config.audience,
      userAgent: "testbay-local-agent/0.1.0",
    });

  const workRoot = path.join(config.dataDir, "tmp", "local-agent");
  await mkdir(workRoot, { recursive: true, mode: privateDirMode });
  // Created here, private, so the agent (which knows nothing of data dirs) finds it rather than making it 0755.
  const cacheDir = path.join(config.dataDir, "cache", "binaries");
  await mkdir(cacheDir, { recursive: true, mode: privateDirMode });

  const serve = async (organization: string) => {
    let client: Testbay | undefined;
    const known = saved[organization];
    if (known) {
      client = connect(known);
      try {
        await client.tokens.get();
        // Made before clients had names (migration 0024): which client is the local agent's only this file says.
        await clients.nameIfUnnamed(known.client_id, localAgentClientName);
      } catch (error) {
        // Disabled or deleted by an admin, or from another store: make a new one.
        if (!(error instanceof TestbayApiError)) throw error;
        client = undefined;
      }
    }
    if (!client) {
      const issued = await clients.createClient(organization, "agent", undefined, localAgentClientName);
      saved[organization] = { client_id: issued.client_id, client_secret: issued.client_secret };
      await writeCredentials(config.dataDir, file, saved);
      client = connect(issued);
      // Its first token now, before the server says it listens, as for saved credentials above: fetched by
      // the workers' first claim instead, it was in flight when a SIGTERM came right after the banner (a test,
      // a quick restart), and the SDK retried the 503s of the closing server for seconds, deaf to the agent's
      // stop (a token fetch takes no abort signal), until main.ts's 10 s timer exited with 1 (issue 26).
      await client.tokens.get();
    }
    const agent = new Agent({
      client,
      name: "local",
      allowShell: config.localAgentShell,
      devices: "none",
      concurrency: 2,
      workRoot,
      cacheDir,
      log: (message) => app.log.info({ agent: "local", organization }, message),
    });
    await agent.start();
    agents.set(organization, agent);
  };

  const serveNewOrganizations = async () => {
    for (const organization of await clients.listOrganizationNames()) {
      if (agents.has(organization)) continue;
      try {
        await serve(organization);
      } catch (error) {
        app.log.warn({ err: error }, `local agent not started for organization ${organization}`);
      }
    }
  };
  await serveNewOrganizations();
  const timer = setInterval(() => {
    serveNewOrganizations().catch((error) => app.log.warn({ err: error }, "local agent: organizations"));
  }, newOrganizationCheckMs);
  timer.unref();
  // Running jobs get a few seconds to finish while the server still answers; the rest are handed back.
  app.services.beforeClose.push(async () => {
    clearInterval(timer);
    await Promise.all([...agents.values()].map((agent) => agent.stop(5000)));
  });
  return [...agents.values()];
}

/** The saved credentials; the first version of the file held the default organization's only. */
async function readCredentials(file: string): Promise<CredentialsFile> {
  const parsed = await readFile(file, "utf8").then(
    (text) => JSON.parse(text) as CredentialsFile | LocalAgentCredentials,
    () => ({}) as CredentialsFile,
  );
  if (typeof parsed.client_id === "string") return { default: parsed as LocalAgentCredentials };
  return parsed as CredentialsFile;
}

async function writeCredentials(dataDir: string, file: string, saved: CredentialsFile): Promise<void> {
  await mkdir(dataDir, { recursive: true, mode: privateDirMode });
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, `${JSON.stringify(saved, null, 2)}\n`, { mode: 0o600 });
  await rename(partial, file);
}
