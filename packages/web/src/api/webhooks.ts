import { queryOptions } from "@tanstack/react-query";
import type { operations } from "../../../client/src/sdk/api.generated.ts";
import { api } from "./client.ts";
import { ApiProblem, unwrap } from "./problem.ts";
import type { Problem } from "./types.ts";
import { deliveryPollMs } from "./webhook-delivery-polling.ts";

// Webhooks (API.md §9): where the organization's run results are sent, and what was sent. A secret comes back only
// from the calls that make it (create, rotate) and is never kept in the query cache: the page shows it once.

export type Webhook = operations["getWebhook"]["responses"][200]["content"]["application/json"];
export type CreatedWebhook = operations["createWebhook"]["responses"][201]["content"]["application/json"];
export type NewWebhook = NonNullable<
  operations["createWebhook"]["requestBody"]
>["content"]["application/json"];
export type WebhookFormat = Webhook["format"];
export type WebhookChanges = NonNullable<
  operations["updateWebhook"]["requestBody"]
>["content"]["application/json"];
/** A message, its body as sent (`request_body`) and its attempts, each with the request it sent (or null). */
export type WebhookDelivery =
  operations["listWebhookDeliveries"]["responses"][200]["content"]["application/json"]["items"][number];
export type WebhookAttempt = WebhookDelivery["attempts"][number];

/** The events a webhook subscribes to (API.md §9), with what each says, for the form's checkboxes. */
export const webhookEvents = [
  { name: "execution.started", help: "a run started" },
  { name: "execution.finished", help: "a run ended: passed, failed, errored or cancelled" },
  { name: "version.uploaded", help: "a build was uploaded" },
  { name: "test.flaky_detected", help: "a test turned flaky" },
] as const;

export const webhooksQuery = queryOptions({
  queryKey: ["settings", "webhooks"],
  // 200 is the most a page holds; an organization with more webhooks than that is not one page's business.
  queryFn: async () => unwrap(await api.GET("/v1/webhooks", { params: { query: { limit: 200 } } })).items,
});

/** A webhook's delivery log, newest first; read again while a message is pending, so a sent test shows up. */
export const deliveriesQuery = (webhookId: string) =>
  queryOptions({
    queryKey: ["settings", "webhooks", webhookId, "deliveries"],
    queryFn: async () =>
      unwrap(
        await api.GET("/v1/webhooks/{id}/deliveries", {
          params: { path: { id: webhookId }, query: { limit: 50 } },
        }),
      ).items,
    refetchInterval: (query) => deliveryPollMs(query.state.data, Date.now()),
  });

export async function createWebhook(webhook: NewWebhook): Promise<CreatedWebhook> {
  return unwrap(await api.POST("/v1/webhooks", { body: webhook }));
}

/** Where it posts, what it gets, what it is for: only what is given changes (its format never does). */
export async function updateWebhook(id: string, changes: WebhookChanges): Promise<Webhook> {
  return unwrap(await api.PATCH("/v1/webhooks/{id}", { params: { path: { id } }, body: changes }));
}

export async function setWebhookEnabled(id: string, enabled: boolean): Promise<Webhook> {
  return unwrap(await api.PATCH("/v1/webhooks/{id}", { params: { path: { id } }, body: { enabled } }));
}

/** A new signing secret: the old one stops verifying at once. */
export async function rotateWebhookSecret(id: string): Promise<CreatedWebhook> {
  return unwrap(await api.POST("/v1/webhooks/{id}/rotate-secret", { params: { path: { id } } }));
}

/** Queues a webhook.test message; the answer is its delivery id. */
export async function sendWebhookTest(id: string): Promise<string> {
  return unwrap(await api.POST("/v1/webhooks/{id}/test", { params: { path: { id } } })).delivery_id;
}

export async function redeliverWebhookMessage(id: string, deliveryId: string): Promise<string> {
  return unwrap(
    await api.POST("/v1/webhooks/{id}/deliveries/{delivery_id}/redeliver", {
      params: { path: { id, delivery_id: deliveryId } },
    }),
  ).delivery_id;
}

/** 204: its delivery log goes with it. */
export async function deleteWebhook(id: string): Promise<void> {
  const result = await api.DELETE("/v1/webhooks/{id}", { params: { path: { id } } });
  if (result.response.ok) return;
  const problem = typeof result.error === "object" && result.error !== null ? result.error : {};
  throw new ApiProblem(result.response.status, problem as Partial<Problem>);
}
