import swagger from "@fastify/swagger";
import type { FastifyInstance } from "fastify";
import { Problem } from "./problem.schema.ts";

/** Collects every route's schema into an OpenAPI 3.1 document, served at GET /v1/openapi.json. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(Problem);
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Testbay API",
        version: "1.0.0",
        description:
          "Runs automated test plans against mobile app binaries. Authenticate with POST /v1/oauth/token and send the token as the x-api-key header. Every error is an RFC 9457 problem document with a `code` and a `fix`. Every response carries RateLimit and RateLimit-Policy headers; 429 carries Retry-After.",
      },
      components: {
        securitySchemes: { apiKey: { type: "apiKey", in: "header", name: "x-api-key" } },
      },
      security: [{ apiKey: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
  });

  app.get("/v1/openapi.json", { config: { auth: "public" }, schema: { hide: true } }, async () =>
    app.swagger(),
  );
}
