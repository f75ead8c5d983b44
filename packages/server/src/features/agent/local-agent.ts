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

/** The organization whose device-less plans the local agent runs. */
const organization = "default";

/**
 * The embedded default's built-in agent: a `testbay-agent` running in this process for plans that need no
 * device, so a fresh install runs a plan to the end with nothing else installed. It talks to this server
 * over HTTP like any agent (same protocol, same limits), as its own agent client, whose credentials live
 * in `<data dir>/local-agent.json` (0600). Inspect steps only, unless TESTBAY_LOCAL_AGENT_SHELL=true.
 */
export async function startLocalAgent(
  app: FastifyInstance,
  config: Config,
  clients: ClientsService,
  baseUrl: string,
): Promise<Agent | undefined> {
  const connect = (credentials: LocalAgentCredentials) =>
    new Testbay({
      baseUrl,
      clientId: credentials.client_id,
      clientSecret: credentials.client_secret,
      audience: config.audience,
      userAgent: "testbay-local-agent/0.1.0",
    });
  const file = path.join(config.dataDir, "local-agent.json");
  let client: Testbay | undefined;
  const saved = await readFile(file, "utf8").then(
    (text) => JSON.parse(text) as LocalAgentCredentials,
    () => undefined,
  );
  if (saved) {
    client = connect(saved);
    try {
      await client.tokens.get();
    } catch (error) {
      // Disabled or deleted by an admin, or from another store: make a new one.
      if (!(error instanceof TestbayApiError)) throw error;
      client = undefined;
    }
  }
  if (!client) {
    let issued: LocalAgentCredentials;
    try {
      issued = await clients.createClient(organization, "agent");
    } catch (error) {
      app.log.warn({ err: error }, `local agent not started: it runs plans of organization ${organization}`);
      return undefined;
    }
    await mkdir(config.dataDir, { recursive: true, mode: privateDirMode });
    const partial = `${file}.${process.pid}.tmp`;
    await writeFile(
      partial,
      `${JSON.stringify({ client_id: issued.client_id, client_secret: issued.client_secret }, null, 2)}\n`,
      { mode: 0o600 },
    );
    await rename(partial, file);
    client = connect(issued);
  }
  const workRoot = path.join(config.dataDir, "tmp", "local-agent");
  await mkdir(workRoot, { recursive: true, mode: privateDirMode });
  // Created here, private, so the agent (which knows nothing of data dirs) finds it rather than making it 0755.
  const cacheDir = path.join(config.dataDir, "cache", "binaries");
  await mkdir(cacheDir, { recursive: true, mode: privateDirMode });
  const agent = new Agent({
    client,
    name: "local",
    allowShell: config.localAgentShell,
    devices: "none",
    concurrency: 2,
    workRoot,
    cacheDir,
    log: (message) => app.log.info({ agent: "local" }, message),
  });
  await agent.start();
  // Running jobs get a few seconds to finish while the server still answers; the rest are handed back.
  app.services.beforeClose.push(() => agent.stop(5000));
  return agent;
}
