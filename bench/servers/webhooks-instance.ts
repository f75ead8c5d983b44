// One instance of Testbay as `testbay-server start` builds it (buildApp from TESTBAY_* variables), for the
// webhooks benchmark. The first instance of a set (BENCH_SEED=1) makes the organization and its ci and agent
// clients; the others (the scaled set's second instance) share its database, Redis and data dir.
import { buildApp, loadConfig } from "@testbay/server";
import { portOf, serveForBenchmark } from "./lifecycle.ts";

export interface WebhooksInstanceReady {
  port: number;
  audience: string;
  /** Only from the seeding instance. */
  clients?: {
    ci: { client_id: string; client_secret: string };
    agent: { client_id: string; client_secret: string };
  };
}

serveForBenchmark<WebhooksInstanceReady>(async () => {
  const config = loadConfig();
  const app = await buildApp({ config });
  try {
    await app.listen({ host: "127.0.0.1", port: 0 });
    let clients: WebhooksInstanceReady["clients"];
    if (process.env.BENCH_SEED === "1") {
      await app.services.clients.createOrganization("bench");
      const ci = await app.services.clients.createClient("bench", "ci");
      const agent = await app.services.clients.createClient("bench", "agent");
      clients = {
        ci: { client_id: ci.client_id, client_secret: ci.client_secret },
        agent: { client_id: agent.client_id, client_secret: agent.client_secret },
      };
    }
    return {
      ready: { port: portOf(app.server.address()), audience: config.audience, ...(clients && { clients }) },
      close: () => app.close(),
    };
  } catch (error) {
    await app.close();
    throw error;
  }
});
