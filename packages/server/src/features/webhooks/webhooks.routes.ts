import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { actorOf } from "../audit/index.ts";
import { managesWebhooks, maskedDelivery, maskedWebhook } from "./url-masking.ts";
import {
  CreatedWebhookView,
  CreateWebhookBody,
  DeliveryAccepted,
  DeliveryList,
  DeliveryParams,
  ListQuery,
  RotatedSecretView,
  UpdateWebhookBody,
  WebhookList,
  WebhookParams,
  WebhookView,
  webhookView,
} from "./webhooks.schemas.ts";
import type { WebhooksService } from "./webhooks.service.ts";

/**
 * Who may do what: webhooks are organization settings that decide where run results go, so they are
 * changed by those who change the organization's plans: ci and admin clients, and people who are members or
 * admins. Viewers read them and their delivery log (never a secret); agents have no business here.
 */
const writers = ["ci", "admin"] as const;
const roles =
  " Read by ci and admin clients and by every person (viewers included); created, changed and deleted by ci and admin clients and by members and admins. Viewers see each URL as scheme, host and port only (a Slack webhook's path is its secret), in the delivery log's requests too. Another organization's webhook is unknown (404 webhook_not_found).";

export const webhooksRoutes: FastifyPluginAsyncTypebox<{ webhooks: WebhooksService }> = async (
  app,
  { webhooks },
) => {
  app.post(
    "/v1/webhooks",
    {
      config: { auth: writers },
      schema: {
        summary: "Create a webhook",
        description: `201 with the signing secret (whsec_…), shown this once; slack-format webhooks have none. Events the endpoint receives from now on are delivered at least once, signed per Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature), retried per TESTBAY_WEBHOOK_RETRY_SCHEDULE, and the endpoint is disabled when a message's schedule is spent. Unknown event names, non-http(s) URLs and loopback/private/link-local address literals or localhost are refused with 400 invalid_request. Audited as webhook.created.${roles}`,
        tags: ["webhooks"],
        body: CreateWebhookBody,
        response: { 201: CreatedWebhookView, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      const created = await webhooks.create(principal.organizationId, request.body, actorOf(principal));
      return reply.code(201).send(created);
    },
  );

  app.get(
    "/v1/webhooks",
    {
      config: { auth: writers },
      schema: {
        summary: "List webhooks",
        description: `The organization's webhooks, newest first, in pages (next_cursor). Secrets are never listed.${roles}`,
        tags: ["webhooks"],
        querystring: ListQuery,
        response: { 200: WebhookList, ...ProblemResponses },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const page = await webhooks.list(
        principal.organizationId,
        request.query.limit ?? 50,
        request.query.cursor,
      );
      return managesWebhooks(principal) ? page : { ...page, items: page.items.map(maskedWebhook) };
    },
  );

  app.get(
    "/v1/webhooks/:id",
    {
      config: { auth: writers },
      schema: {
        summary: "Get a webhook",
        description: `The webhook without its secret; enabled false with disabled_reason when the server disabled it.${roles}`,
        tags: ["webhooks"],
        params: WebhookParams,
        response: { 200: WebhookView, ...ProblemResponses },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const view = webhookView(await webhooks.get(principal.organizationId, request.params.id));
      return managesWebhooks(principal) ? view : maskedWebhook(view);
    },
  );

  app.patch(
    "/v1/webhooks/:id",
    {
      config: { auth: writers },
      schema: {
        summary: "Change a webhook",
        description: `Changes what is given. enabled: true after the server disabled it clears disabled_reason, and its pending messages are sent again (missed ones: redeliver them). Audited as webhook.updated.${roles}`,
        tags: ["webhooks"],
        params: WebhookParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookView, ...ProblemResponses },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return webhookView(
        await webhooks.update(principal.organizationId, request.params.id, request.body, actorOf(principal)),
      );
    },
  );

  app.delete(
    "/v1/webhooks/:id",
    {
      config: { auth: writers },
      schema: {
        summary: "Delete a webhook",
        description: `204; its delivery log goes with it and nothing more is sent to it. Audited as webhook.deleted.${roles}`,
        tags: ["webhooks"],
        params: WebhookParams,
        response: { 204: Type.Null({ description: "Deleted" }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const principal = principalOf(request);
      await webhooks.delete(principal.organizationId, request.params.id, actorOf(principal));
      return reply.code(204).send(null);
    },
  );

  app.post(
    "/v1/webhooks/:id/rotate-secret",
    {
      config: { auth: writers },
      schema: {
        summary: "Rotate a webhook's signing secret",
        description: `A new secret, shown this once; attempts from now on are signed with it only (retries of earlier messages included). 400 for slack-format webhooks, which are not signed. Audited as webhook.secret_rotated.${roles}`,
        tags: ["webhooks"],
        params: WebhookParams,
        response: { 200: RotatedSecretView, ...ProblemResponses },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      return webhooks.rotateSecret(principal.organizationId, request.params.id, actorOf(principal));
    },
  );

  app.post(
    "/v1/webhooks/:id/test",
    {
      config: { auth: writers },
      schema: {
        summary: "Send a test message",
        description: `202: a webhook.test message ({webhook_id}) is queued for the endpoint whatever its events, delivered and retried like any other; follow it in the delivery log. A disabled endpoint's messages wait until it is enabled again.${roles}`,
        tags: ["webhooks"],
        params: WebhookParams,
        response: { 202: DeliveryAccepted, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const id = await webhooks.sendTest(principalOf(request).organizationId, request.params.id);
      return reply.code(202).send({ delivery_id: id });
    },
  );

  app.get(
    "/v1/webhooks/:id/deliveries",
    {
      config: { auth: writers },
      schema: {
        summary: "A webhook's delivery log",
        description: `One item per message, newest first, in pages (next_cursor), each with its attempts oldest first: when, the answer's status and first KiB, how long it took and why it failed.${roles}`,
        tags: ["webhooks"],
        params: WebhookParams,
        querystring: ListQuery,
        response: { 200: DeliveryList, ...ProblemResponses },
      },
    },
    async (request) => {
      const principal = principalOf(request);
      const page = await webhooks.deliveries(
        principal.organizationId,
        request.params.id,
        request.query.limit ?? 50,
        request.query.cursor,
      );
      return managesWebhooks(principal) ? page : { ...page, items: page.items.map(maskedDelivery) };
    },
  );

  app.post(
    "/v1/webhooks/:id/deliveries/:delivery_id/redeliver",
    {
      config: { auth: writers },
      schema: {
        summary: "Redeliver a message",
        description: `202: the message is sent again with the same webhook-id (receivers that deduplicate on it see a repeat), from the start of the retry schedule. 404 webhook_delivery_not_found for a delivery of another webhook.${roles}`,
        tags: ["webhooks"],
        params: DeliveryParams,
        response: { 202: DeliveryAccepted, ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const id = await webhooks.redeliver(
        principalOf(request).organizationId,
        request.params.id,
        request.params.delivery_id,
      );
      return reply.code(202).send({ delivery_id: id });
    },
  );
};
