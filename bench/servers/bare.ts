// The baseline: plain Fastify (the version Testbay uses), logger off, no hooks, one route answering a JSON
// object shaped and sized like GET /v1/me's.
import Fastify from "fastify";
import { portOf, serveForBenchmark } from "./lifecycle.ts";

export interface BareReady {
  port: number;
  fastifyVersion: string;
}

const body = {
  client_id: "cl_01KBENCH000000000000000000",
  role: "ci",
  organization: { id: "org_01KBENCH000000000000000000", name: "bench" },
  token_expires_at: "2026-01-02T00:00:00.000Z",
};

serveForBenchmark<BareReady>(async () => {
  const app = Fastify({ logger: false });
  app.get("/", async () => body);
  await app.listen({ host: "127.0.0.1", port: 0 });
  return {
    ready: { port: portOf(app.server.address()), fastifyVersion: app.version },
    close: () => app.close(),
  };
});
