// The Testbay server as `testbay-server start` builds it (buildApp from TESTBAY_* variables), on the embedded
// SQLite store in the data dir the parent chose, with one organization and one ci client to authenticate as.
import { buildApp, loadConfig } from "@testbay/server";
import { portOf, serveForBenchmark } from "./lifecycle.ts";

export interface TestbayReady {
  port: number;
  fastifyVersion: string;
  logLevel: string;
  audience: string;
  rateLimit: { burst: number; perSecond: number };
  credentials: { client_id: string; client_secret: string };
}

serveForBenchmark<TestbayReady>(async () => {
  const config = loadConfig();
  const app = await buildApp({ config });
  try {
    await app.listen({ host: "127.0.0.1", port: 0 });
    await app.services.clients.createOrganization("bench");
    const { client_id, client_secret } = await app.services.clients.createClient("bench", "ci");
    return {
      ready: {
        port: portOf(app.server.address()),
        fastifyVersion: app.version,
        logLevel: config.logLevel,
        audience: config.audience,
        rateLimit: config.rateLimit,
        credentials: { client_id, client_secret },
      },
      close: () => app.close(),
    };
  } catch (error) {
    await app.close();
    throw error;
  }
});
