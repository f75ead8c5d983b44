import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../errors.ts";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { actorOf } from "../audit/index.ts";
import { checkClientName, clientNameRule } from "./client-name.ts";
import { clientView } from "./client-view.ts";
import { ClientIdParams, ClientView, CreateClientBody, IssuedClient } from "./clients.schemas.ts";
import type { ClientsService } from "./clients.service.ts";

/** The body's name, trimmed; 400 with what to send instead when it breaks the rule (clientNameRule). */
function nameOf(name: string | null | undefined): string | null {
  if (name === undefined || name === null) return null;
  const checked = checkClientName(name);
  if ("name" in checked) return checked.name;
  throw new ApiError("invalid_request", {
    detail: `${checked.problem}.`,
    fix: `Send a name of ${clientNameRule}, e.g. {"role": "ci", "name": "nightly CI"}, or leave name out.`,
    extra: {
      errors: [{ path: "/name", in: "body", message: checked.problem.replace(/^The client name /, "") }],
    },
  });
}

/** A secret in a response must not stay in a browser's or a proxy's cache. */
const noStore = (reply: FastifyReply) => reply.header("cache-control", "no-store");

/**
 * Admins manage their organization's clients over HTTP as the admin CLI does on the server: create (the
 * secret shown once), disable, enable, rotate. Every change is audited with the calling person or client.
 */
export const clientAdminRoutes: FastifyPluginAsyncTypebox<{ clients: ClientsService }> = async (
  app,
  { clients },
) => {
  /** The caller's organization's client, or 404 as for one that does not exist. */
  const ownClient = (request: FastifyRequest, id: string) =>
    clients.getClient(principalOf(request).organizationId, id);

  app.post(
    "/v1/clients",
    {
      config: { auth: ["admin"] },
      schema: {
        summary: "Create a client",
        description:
          "A new client of the caller's organization, with an optional name: 201 with its client_id and client_secret. The secret is shown only in this response (and in a rotation's): store it in the pipeline's or the agent's secrets now. Admins only.",
        tags: ["clients"],
        body: CreateClientBody,
        response: { 201: IssuedClient, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const issued = await clients.createClient(
        principal.organizationName,
        request.body.role,
        actorOf(principal),
        nameOf(request.body.name),
      );
      return noStore(reply).code(201).header("location", `/v1/clients/${issued.client_id}`).send(issued);
    },
  );

  app.post(
    "/v1/clients/:client_id/disable",
    {
      config: { auth: ["admin"] },
      schema: {
        summary: "Disable a client",
        description:
          "The client can no longer get tokens, and the tokens it holds stop working at once. Disabling a disabled client changes nothing. An admin client cannot disable itself (409 self_lockout): it would lose its own access mid-call. Admins only.",
        tags: ["clients"],
        params: ClientIdParams,
        response: { 200: ClientView, ...ProblemResponses },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const client = await ownClient(request, request.params.client_id);
      if (!principal.person && principal.clientId === client.id) {
        throw new ApiError("self_lockout", {
          reason: "own_client",
          detail: "A client cannot disable itself: the token making this call would stop working.",
          fix: `Disable it with another admin client or as an administrator signed in to the dashboard (Settings), or on the server: testbay-server client disable ${client.id}.`,
        });
      }
      await clients.disableClient(client.id, actorOf(principal));
      return clientView(await ownClient(request, request.params.client_id));
    },
  );

  app.post(
    "/v1/clients/:client_id/enable",
    {
      config: { auth: ["admin"] },
      schema: {
        summary: "Enable a client",
        description:
          "A disabled client can get tokens again; the tokens it held before it was disabled stay refused. Enabling an enabled client changes nothing. Admins only.",
        tags: ["clients"],
        params: ClientIdParams,
        response: { 200: ClientView, ...ProblemResponses },
      },
    },
    async (request) => {
      const client = await ownClient(request, request.params.client_id);
      await clients.enableClient(client.id, actorOf(principalOf(request)));
      return clientView(await ownClient(request, request.params.client_id));
    },
  );

  app.post(
    "/v1/clients/:client_id/rotate",
    {
      config: { auth: ["admin"] },
      schema: {
        summary: "Rotate a client's secret",
        description:
          "Gives the client a new secret, shown only in this response. The old secret stops working at once, and so does every token issued with it: pipelines or agents using the client fail until they get the new one. An admin client rotating its own secret loses the token it called with: it gets a new token with the new secret. A disabled client stays disabled. Admins only.",
        tags: ["clients"],
        params: ClientIdParams,
        response: { 200: IssuedClient, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const client = await ownClient(request, request.params.client_id);
      const issued = await clients.rotateSecret(client.id, actorOf(principalOf(request)));
      return noStore(reply).send(issued);
    },
  );
};
