import swagger from "@fastify/swagger";
import type { FastifyInstance, RouteOptions } from "fastify";
import { Type } from "typebox";
import { serverVersion } from "../features/downloads/index.ts";
import { apiReferencePath, apiReferencePathItem } from "./api-reference.ts";
import { completeDocument, marker, type OpenApiDocument } from "./openapi-document.ts";
import { withSchemaNames } from "./openapi-schemas.ts";
import { Problem } from "./problem.schema.ts";

const tags = [
  { name: "auth", description: "Access tokens (OAuth 2.0 client credentials)." },
  { name: "clients", description: "Who is calling, and the organization's API clients." },
  { name: "apps", description: "Apps, their versions and the uploaded binaries." },
  { name: "testplans", description: "What to run against a version: devices and steps." },
  { name: "triggers", description: "Starting test plans against a version." },
  { name: "executions", description: "Runs of a test plan: status, results, logs and artifacts." },
  { name: "tests", description: "A plan's tests over its recent runs: failures, flakiness, durations." },
  {
    name: "webhooks",
    description: "Telling other systems when runs start and finish: endpoints, deliveries.",
  },
  { name: "agents", description: "The agent protocol: device hosts claim jobs and report results." },
  { name: "errors", description: "What each problem `code` means." },
  { name: "health", description: "Probes for load balancers and orchestrators." },
  { name: "docs", description: "This API's description, for people and for tools." },
  { name: "downloads", description: "The CLI and the agent of this server's version, to install anywhere." },
];

/**
 * The route's schema as the document shows it: named schemas become components, the router's wildcard
 * (`/artifacts/*`) becomes the `{name}` it stands for, and the route's auth and rate-limit settings are
 * left as markers for completeDocument.
 */
function documentRoute({ schema, url, route }: { schema: unknown; url: string; route: RouteOptions }) {
  if (!schema) return { schema, url };
  const documented = withSchemaNames(schema) as Record<string, unknown> & {
    params?: { properties?: Record<string, unknown>; required?: string[] };
  };
  let documentedUrl = url;
  const params = documented.params;
  if (url.endsWith("/*") && params?.properties) {
    documentedUrl = `${url.slice(0, -1)}:name`;
    const { "*": _wildcard, ...named } = params.properties;
    params.properties = {
      ...named,
      name: {
        type: "string",
        minLength: 1,
        description: "The artifact's name: a relative path, which may hold '/' (screenshots/login.png).",
      },
    };
    params.required = (params.required ?? []).map((key) => (key === "*" ? "name" : key));
  }
  documented[marker.public] = route.config?.auth === "public";
  documented[marker.rateLimited] = route.config?.rateLimit !== "skip";
  return { schema: documented, url: documentedUrl };
}

/** Collects every route's schema into an OpenAPI 3.1 document, served at GET /v1/openapi.json. */
export async function registerOpenApi(app: FastifyInstance): Promise<void> {
  app.addSchema(Problem);
  await app.register(swagger, {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: "Testbay API",
        version: serverVersion,
        description:
          "Runs automated test plans against mobile app binaries. Authenticate with POST /v1/oauth/token and send the token as the x-api-key header. Every error is an RFC 9457 problem document (application/problem+json) with a `code` and a `fix`. Rate-limited responses carry RateLimit and RateLimit-Policy headers; 429 carries Retry-After.",
      },
      // Relative: the document is served by the server it describes, whatever name it is reached by.
      servers: [{ url: "/", description: "The server this document was fetched from" }],
      tags,
      components: {
        securitySchemes: {
          apiKey: {
            type: "apiKey",
            in: "header",
            name: "x-api-key",
            description: "An access token from POST /v1/oauth/token.",
          },
          clientSecretBasic: {
            type: "http",
            scheme: "basic",
            description:
              "The token endpoint's client authentication (client_secret_basic): the client ID and secret, each URL-encoded.",
          },
        },
      },
      security: [{ apiKey: [] }],
    },
    // Shared and named schemas are components under their own `$id`, not `def-0`, `def-1`, …
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => String(json.$id ?? `def-${i}`) },
    transform: documentRoute as never,
    transformObject: (documentObject) => {
      const document = (documentObject as { openapiObject: unknown }).openapiObject as OpenApiDocument;
      document.paths[apiReferencePath] = apiReferencePathItem();
      return completeDocument(document) as never;
    },
  });

  app.get(
    "/v1/openapi.json",
    {
      config: { auth: "public" },
      schema: {
        summary: "This OpenAPI 3.1 document",
        tags: ["docs"],
        security: [],
        response: { 200: Type.Object({}, { additionalProperties: true, description: "OpenAPI 3.1" }) },
      },
    },
    async () => app.swagger(),
  );
}
