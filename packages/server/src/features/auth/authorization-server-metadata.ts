import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { ClientAuthMethod } from "./client-credentials.ts";

export const metadataPath = "/.well-known/oauth-authorization-server";

const authMethods: ClientAuthMethod[] = ["client_secret_basic", "client_secret_post"];

export const AuthorizationServerMetadata = Type.Object(
  {
    issuer: Type.String({ format: "uri", description: "This server's base URL, without /v1." }),
    token_endpoint: Type.String({ format: "uri" }),
    grant_types_supported: Type.Array(Type.Literal("client_credentials")),
    token_endpoint_auth_methods_supported: Type.Array(
      Type.Union([Type.Literal("client_secret_basic"), Type.Literal("client_secret_post")]),
    ),
    response_types_supported: Type.Array(Type.String(), {
      description: "Empty: there is no authorization endpoint, only the client credentials grant.",
    }),
  },
  { additionalProperties: false },
);

export interface MetadataRoutesOptions {
  /** TESTBAY_PUBLIC_URL (`…/v1`), when set; otherwise the address the request came to. */
  publicUrl: string | undefined;
}

/** The issuer: the configured public URL without its `/v1`, or the scheme and host the caller used. */
function issuerFor(request: FastifyRequest, publicUrl: string | undefined): string {
  if (publicUrl) return publicUrl.replace(/\/v1$/, "");
  // HTTP/1.0 requests may come without a Host header: name the address they reached instead.
  const { localAddress = "127.0.0.1", localPort } = request.socket;
  const address = localAddress.includes(":") ? `[${localAddress}]` : localAddress;
  return `${request.protocol}://${request.host || `${address}:${localPort}`}`;
}

/**
 * RFC 8414 metadata, so OAuth libraries can find the token endpoint and the client authentication methods
 * from the server's address alone. Outside /v1 because the path is fixed by the RFC.
 */
export const metadataRoutes: FastifyPluginAsyncTypebox<MetadataRoutesOptions> = async (app, options) => {
  app.get(
    metadataPath,
    {
      // Static and cheap; CI jobs behind one address may all discover at once, so no per-address bucket.
      config: { auth: "public", rateLimit: "skip" },
      schema: {
        summary: "OAuth 2.0 authorization server metadata (RFC 8414)",
        description:
          "Where the token endpoint is and how clients authenticate to it, for OAuth libraries that discover it.",
        tags: ["auth"],
        security: [],
        response: { 200: AuthorizationServerMetadata },
      },
    },
    async (request) => {
      const issuer = issuerFor(request, options.publicUrl);
      return {
        issuer,
        token_endpoint: `${issuer}/v1/oauth/token`,
        grant_types_supported: ["client_credentials" as const],
        token_endpoint_auth_methods_supported: authMethods,
        response_types_supported: [],
      };
    },
  );
};
