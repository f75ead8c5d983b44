import { type Clock, isoTime } from "../../clock.ts";
import { ApiError } from "../../errors.ts";
import { decodeCursor, encodeCursor, toPage } from "../../http/pagination.ts";
import { newId } from "../../ids.ts";
import type { Actor, AuditLog } from "../audit/index.ts";
import { literalRefusal } from "./address-guard.ts";
import { subscribableEvents, testEvent } from "./event-types.ts";
import { newWebhookSecret, type SecretBox } from "./secret-box.ts";
import { requestBody } from "./webhook-request.ts";
import type { WebhookChanges, WebhookFormat, WebhookRecord, WebhooksRepo } from "./webhooks.repo.ts";
import { deliveryView, webhookView } from "./webhooks.schemas.ts";

export interface WebhooksServiceOptions {
  repo: WebhooksRepo;
  secrets: SecretBox;
  audit: AuditLog;
  clock: Clock;
  /** TESTBAY_WEBHOOK_ALLOW_PRIVATE: lifts the address guard for on-premises receivers and tests. */
  allowPrivate: boolean;
  /** TESTBAY_PUBLIC_URL: Slack messages link to runs with it (the log shows what a message will send). */
  publicUrl: string | undefined;
  /** Called when a delivery is due now (test, redeliver): the worker need not wait for its next round. */
  onDue?: () => void;
}

/** An organization's webhook endpoints (API.md §9): settings, their secrets and their delivery log. */
export class WebhooksService {
  constructor(private readonly options: WebhooksServiceOptions) {}

  async create(
    organizationId: string,
    input: { url: string; events: string[]; description?: string; format?: WebhookFormat },
    actor: Actor,
  ): Promise<ReturnType<typeof webhookView> & { secret?: string }> {
    const url = this.checkedUrl(input.url);
    const events = checkedEvents(input.events);
    const format = input.format ?? "standard";
    const secret = format === "standard" ? newWebhookSecret() : undefined;
    const now = isoTime(this.options.clock.now());
    const webhook: WebhookRecord = {
      id: newId("wh", this.options.clock.now()),
      organizationId,
      url,
      events,
      format,
      description: input.description ?? null,
      enabled: true,
      disabledReason: null,
      sealedSecret: secret === undefined ? null : this.options.secrets.seal(secret),
      createdAt: now,
      updatedAt: now,
    };
    await this.options.repo.insert(webhook);
    await this.audit(organizationId, actor, "webhook.created", webhook.id, { url, events, format });
    return { ...webhookView(webhook), ...(secret === undefined ? {} : { secret }) };
  }

  async list(organizationId: string, limit: number, cursor: string | undefined) {
    const rows = await this.options.repo.list(organizationId, limit, decodeCursor(cursor));
    return toPage(rows, limit, webhookView);
  }

  async get(organizationId: string, id: string): Promise<WebhookRecord> {
    const webhook = await this.options.repo.find(organizationId, id);
    if (!webhook) {
      throw new ApiError("webhook_not_found", { reason: "unknown", detail: `There is no webhook ${id}.` });
    }
    return webhook;
  }

  async update(
    organizationId: string,
    id: string,
    input: { enabled?: boolean; url?: string; events?: string[]; description?: string | null },
    actor: Actor,
  ): Promise<WebhookRecord> {
    const before = await this.get(organizationId, id);
    const changes: WebhookChanges = {};
    if (input.url !== undefined) changes.url = this.checkedUrl(input.url);
    if (input.events !== undefined) changes.events = checkedEvents(input.events);
    if (input.description !== undefined) changes.description = input.description;
    if (input.enabled !== undefined) {
      changes.enabled = input.enabled;
      // Enabled again by someone who (we trust) fixed the receiver: the old reason no longer holds.
      if (input.enabled) changes.disabledReason = null;
    }
    const after = await this.options.repo.update(
      organizationId,
      id,
      changes,
      isoTime(this.options.clock.now()),
    );
    if (!after)
      throw new ApiError("webhook_not_found", { reason: "unknown", detail: `There is no webhook ${id}.` });
    await this.audit(organizationId, actor, "webhook.updated", id, {
      ...Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)),
      ...(input.enabled === true && before.disabledReason
        ? { previous_disabled_reason: before.disabledReason }
        : {}),
    });
    if (input.enabled === true) this.options.onDue?.();
    return after;
  }

  async delete(organizationId: string, id: string, actor: Actor): Promise<void> {
    const webhook = await this.get(organizationId, id);
    if (!(await this.options.repo.delete(organizationId, id))) {
      throw new ApiError("webhook_not_found", { reason: "unknown", detail: `There is no webhook ${id}.` });
    }
    await this.audit(organizationId, actor, "webhook.deleted", id, { url: webhook.url });
  }

  /** A new signing secret, shown once; the old one stops signing at once (attempts from now on use the new). */
  async rotateSecret(organizationId: string, id: string, actor: Actor) {
    const webhook = await this.get(organizationId, id);
    if (webhook.format === "slack") {
      throw new ApiError("invalid_request", {
        detail: `Webhook ${id} sends in the slack format, which is not signed: it has no secret to rotate.`,
        fix: "Rotate secrets of standard-format webhooks only; to change where a Slack webhook posts, PATCH its url.",
      });
    }
    const secret = newWebhookSecret();
    const after = await this.options.repo.update(
      organizationId,
      id,
      { sealedSecret: this.options.secrets.seal(secret) },
      isoTime(this.options.clock.now()),
    );
    if (!after)
      throw new ApiError("webhook_not_found", { reason: "unknown", detail: `There is no webhook ${id}.` });
    await this.audit(organizationId, actor, "webhook.secret_rotated", id, {});
    return { ...webhookView(after), secret };
  }

  /** Queues a webhook.test message to the endpoint, whatever it subscribed to; its message id. */
  async sendTest(organizationId: string, id: string): Promise<string> {
    const webhook = await this.get(organizationId, id);
    const now = this.options.clock.now();
    const at = isoTime(now);
    const deliveryId = newId("msg", now);
    await this.options.repo.insertDelivery({
      id: deliveryId,
      webhook_id: webhook.id,
      organization_id: organizationId,
      event_id: null,
      type: testEvent,
      payload: JSON.stringify({ type: testEvent, timestamp: at, data: { webhook_id: webhook.id } }),
      status: "pending",
      attempts: 0,
      next_attempt_at: at,
      lease_id: null,
      lease_expires_at: null,
      created_at: at,
      updated_at: at,
    });
    this.options.onDue?.();
    return deliveryId;
  }

  async deliveries(organizationId: string, id: string, limit: number, cursor: string | undefined) {
    const webhook = await this.get(organizationId, id);
    const rows = await this.options.repo.deliveries(id, limit, decodeCursor(cursor));
    const items = rows.slice(0, limit);
    const last = items[items.length - 1];
    return {
      items: items.map((delivery) =>
        deliveryView(delivery, () => requestBody(webhook.format, delivery.payload, this.options.publicUrl)),
      ),
      next_cursor:
        rows.length > limit && last ? encodeCursor({ createdAt: last.created_at, id: last.id }) : null,
    };
  }

  /** Sends a message again from the start of the schedule, with the same webhook-id. */
  async redeliver(organizationId: string, id: string, deliveryId: string): Promise<string> {
    await this.get(organizationId, id);
    if (!(await this.options.repo.redeliver(id, deliveryId, isoTime(this.options.clock.now())))) {
      throw new ApiError("webhook_delivery_not_found", {
        detail: `Webhook ${id} has no delivery ${deliveryId}.`,
      });
    }
    this.options.onDue?.();
    return deliveryId;
  }

  /** The URL as given, if it is http(s) and not an address the guard refuses outright. */
  private checkedUrl(text: string): string {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      throw invalidUrl(
        "is not a URL",
        "Give an absolute http(s) URL such as https://hooks.example.com/testbay.",
      );
    }
    if (url.protocol !== "https:" && url.protocol !== "http:") {
      throw invalidUrl(`uses ${url.protocol.replace(/:$/, "")}`, "Give an http:// or https:// URL.");
    }
    if (url.username || url.password) {
      throw invalidUrl(
        "carries credentials",
        "Leave user and password out of the URL: verify deliveries with the webhook's signing secret instead.",
      );
    }
    const refusal = this.options.allowPrivate ? undefined : literalRefusal(url);
    if (refusal) {
      throw invalidUrl(
        `is not allowed: ${refusal}`,
        "Give the receiver's public address. For receivers on the server's own network (on-premises), the operator can start the server with TESTBAY_WEBHOOK_ALLOW_PRIVATE=true.",
      );
    }
    return url.href;
  }

  private audit(
    organizationId: string,
    actor: Actor,
    action: "webhook.created" | "webhook.updated" | "webhook.deleted" | "webhook.secret_rotated",
    id: string,
    details: Record<string, unknown>,
  ) {
    return this.options.audit.record({
      organizationId,
      actor,
      action,
      target: { type: "webhook", id },
      details,
    });
  }
}

function invalidUrl(problem: string, fix: string): ApiError {
  return new ApiError("invalid_request", {
    detail: `The webhook URL ${problem}.`,
    fix,
    extra: { errors: [{ path: "/url", in: "body", message: problem }] },
  });
}

/** The events, each once, if every one is an event the server sends. */
function checkedEvents(events: string[]): string[] {
  const unknown = events.filter((event) => !(subscribableEvents as readonly string[]).includes(event));
  if (unknown.length > 0) {
    throw new ApiError("invalid_request", {
      detail: `Unknown event ${unknown.length === 1 ? "name" : "names"}: ${unknown.join(", ")}.`,
      fix: `Subscribe to one or more of: ${subscribableEvents.join(", ")} (webhook.test is sent by POST /v1/webhooks/{id}/test whatever the subscription).`,
      extra: {
        errors: unknown.map((event) => ({
          path: `/events/${events.indexOf(event)}`,
          in: "body",
          message: `is not one of ${subscribableEvents.join(", ")}`,
        })),
      },
    });
  }
  return [...new Set(events)];
}
