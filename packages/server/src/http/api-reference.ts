import swaggerUi from "@fastify/swagger-ui";
import type { FastifyInstance } from "fastify";
import { marker } from "./openapi-document.ts";

/** Where people read the API reference. */
export const apiReferencePath = "/docs";

/**
 * Only this server's own files: the page must work where there is no internet, and a reference page
 * that loads scripts from elsewhere would run someone else's code next to a visitor's token. The hashes
 * are those of Swagger UI's own inline snippets, as @fastify/swagger-ui publishes them.
 */
function contentSecurityPolicy(app: FastifyInstance): string {
  const hashes = app.swaggerCSP;
  return [
    "default-src 'self'",
    "base-uri 'self'",
    "connect-src 'self'",
    "font-src 'self' data:",
    "img-src 'self' data:",
    "object-src 'none'",
    "frame-ancestors 'none'",
    `script-src 'self' ${hashes.script.join(" ")}`,
    "script-src-attr 'none'",
    `style-src 'self' ${hashes.style.join(" ")}`,
  ].join("; ");
}

/**
 * GET /docs: the API reference for people, Swagger UI rendering this server's OpenAPI document, served
 * entirely from the npm package (no CDN). Public like the document itself.
 */
export async function registerApiReference(app: FastifyInstance): Promise<void> {
  let policy: string | undefined;
  await app.register(async (docs) => {
    // The plugin's routes know nothing of Testbay's route config: they are public, and only its static
    // files (served from disk, fetched several per page view) skip the per-address rate limit.
    docs.addHook("onRoute", (route) => {
      const asset = route.url.startsWith(`${apiReferencePath}/static/`);
      route.config = { ...route.config, auth: "public", ...(asset ? { rateLimit: "skip" } : {}) };
    });
    await docs.register(swaggerUi, {
      routePrefix: apiReferencePath,
      // BaseLayout: no top bar (a third-party logo and a box to load other documents); just this API.
      uiConfig: {
        layout: "BaseLayout",
        deepLinking: true,
        docExpansion: "list",
        defaultModelsExpandDepth: 0,
      },
      theme: { title: "Testbay API reference" },
      validatorUrl: false,
      staticCSP: true,
      transformStaticCSP: () => {
        policy ??= contentSecurityPolicy(docs);
        return policy;
      },
    });
  });
}

/** The page itself in the document (the plugin hides its routes, assets and all). */
export function apiReferencePathItem() {
  return {
    get: {
      summary: "The API reference, for people",
      description:
        "An HTML page rendering this OpenAPI document (Swagger UI), with no resource from elsewhere.",
      tags: ["docs"],
      security: [],
      [marker.public]: true,
      [marker.rateLimited]: true,
      responses: { "200": { description: "OK", content: { "text/html": { schema: { type: "string" } } } } },
    },
  };
}
