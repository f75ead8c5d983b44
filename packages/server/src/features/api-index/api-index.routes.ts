import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import { apiReferencePath } from "../../http/api-reference.ts";
import { serverVersion } from "../downloads/index.ts";

const ApiIndex = Type.Object({
  version: Type.String({
    description: "The server's version (the OpenAPI document's info.version, and GET /healthz's)",
  }),
  links: Type.Object(
    {
      openapi: Type.String({ format: "uri", description: "This API's OpenAPI 3.1 document" }),
      docs: Type.String({ format: "uri", description: "The API reference for people (Swagger UI)" }),
      dashboard: Type.String({ format: "uri", description: "The dashboard, to open in a browser" }),
    },
    {
      description:
        "Absolute URLs: under TESTBAY_PUBLIC_URL when it is set, else under the scheme and host the request came to",
    },
  ),
});

/**
 * Where the server's pages are, without a trailing slash: TESTBAY_PUBLIC_URL without its `/v1` (as the start
 * banner, main.ts, and the OAuth metadata do), else the scheme and host the caller used, which reach this
 * server from where the caller is (a server listening on 0.0.0.0 is not at 127.0.0.1 for another machine).
 */
function siteRoot(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/v1$/, "");
  // HTTP/1.0 requests may come without a Host header: name the address they reached instead.
  const { localAddress = "127.0.0.1", localPort } = request.socket;
  const address = localAddress.includes(":") ? `[${localAddress}]` : localAddress;
  return `${request.protocol}://${request.host || `${address}:${localPort}`}`;
}

/**
 * GET /v1: what someone who opens the API's base URL (the one the start banner and credentials.json give)
 * finds: the server's version and where the OpenAPI document, the API reference and the dashboard are,
 * instead of a 404 (issue 25). Public like the document it points to, and counted in the caller's address's
 * bucket like it: it is for people and tools finding their way, not for probes polled every few seconds
 * (those are /healthz and /readyz, which are not rate limited).
 */
export const apiIndexRoutes: FastifyPluginAsyncTypebox<{ publicUrl: string | undefined }> = async (
  app,
  { publicUrl },
) => {
  const answer = (request: FastifyRequest) => {
    const root = siteRoot(request, publicUrl);
    return {
      version: serverVersion,
      links: {
        openapi: `${root}/v1/openapi.json`,
        docs: `${root}${apiReferencePath}`,
        dashboard: `${root}/`,
      },
    };
  };
  const options = {
    config: { auth: "public" as const },
    schema: {
      summary: "API index: the server's version and links to its documents and dashboard",
      description:
        "No token needed. Where the OpenAPI document, the API reference (/docs) and the dashboard are, as absolute URLs.",
      tags: ["docs"],
      security: [],
      response: { 200: ApiIndex },
    },
  };
  app.get("/v1", options, async (request) => answer(request));
  // The base URL with a trailing slash, as people type it: the same answer, documented once.
  app.get("/v1/", { ...options, schema: { ...options.schema, hide: true } }, async (request) =>
    answer(request),
  );
};
