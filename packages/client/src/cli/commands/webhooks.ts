import type { Command } from "commander";
import { collect } from "../comma-list.ts";
import { ExitCode, UsageError } from "../exit-codes.ts";
import type { Session } from "../session.ts";
import { webhookDetails, webhookEvents, webhookFormat, webhookTable } from "../webhooks-output.ts";

/** --events a,b (repeatable) with no default: a missing --events is a usage error, not an empty list. */
const collectEvents = (value: string, previous: string[] | undefined) => collect(value, previous ?? []);

/** `testbay webhooks …`: webhook endpoints, their secrets and their deliveries (API.md §9). */
export function addWebhooksCommands(program: Command, session: Session): void {
  const webhooks = program
    .command("webhooks")
    .description(
      "Webhooks: send run results to other systems (signed per Standard Webhooks) or to Slack, and see what was sent",
    );
  webhooks
    .command("create")
    .description(
      "Add a webhook endpoint; prints its signing secret (whsec_…) this once on stdout: store it where the receiver reads it",
    )
    .option("--url <url>", "where to POST, http(s) (required)")
    .requiredOption(
      "--events <events>",
      `what to send, separated by commas: ${webhookEvents.join(", ")}`,
      collectEvents,
    )
    .option("--format <format>", "standard (signed, the default) or slack (a Slack incoming webhook)")
    .option("--description <text>", "what it is for, shown beside it")
    .action(async (options: { url?: string; events: string[]; format?: string; description?: string }) => {
      if (options.url === undefined) throw new UsageError("say where to POST with --url URL.");
      const format = webhookFormat(options.format);
      const created = await session.testbay().webhooks.create({
        url: options.url,
        events: options.events,
        ...(format ? { format } : {}),
        ...(options.description !== undefined ? { description: options.description } : {}),
      });
      session.say(`Created webhook ${created.id}: ${created.events.join(", ")} to ${created.url}.`);
      if (created.secret) {
        session.say(
          `Its signing secret is printed ${session.json ? 'as "secret"' : "on stdout"}, this once: store it now (a secret store the receiver reads); testbay webhooks rotate-secret ${created.id} gives a new one.\nReceivers verify each delivery per Standard Webhooks (https://www.standardwebhooks.com): the webhook-id, webhook-timestamp and webhook-signature headers over the raw body, e.g. new Webhook(secret).verify(body, headers) with the standardwebhooks library; a webhook-id seen before is a repeat.`,
        );
        if (!session.json) session.print(`${created.secret}\n`);
      } else {
        session.say("Slack webhooks are not signed: Slack's URL is the secret, keep it out of logs.");
      }
      session.setOutcome({ code: ExitCode.ok, json: created });
    });
  webhooks
    .command("list")
    .description("List the organization's webhooks (never their secrets)")
    .action(async () => {
      const items = [];
      for await (const webhook of session.testbay().webhooks.all({ limit: 200 })) items.push(webhook);
      if (!session.json) {
        session.print(
          items.length
            ? webhookTable(items)
            : "No webhooks: add one with testbay webhooks create --url URL --events execution.finished\n",
        );
      }
      session.setOutcome({ code: ExitCode.ok, json: { items } });
    });
  webhooks
    .command("show")
    .description("Show a webhook and its last deliveries: status, attempts, the last answer or error")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .option("--deliveries <count>", "how many of the last deliveries (1–200)", "10")
    .action(async (id: string, options: { deliveries: string }) => {
      const limit = Number(options.deliveries);
      if (!Number.isInteger(limit) || limit < 1 || limit > 200) {
        throw new UsageError(`--deliveries ${options.deliveries}: say a whole number from 1 to 200.`);
      }
      const testbay = session.testbay();
      const webhook = await testbay.webhooks.get(id);
      const deliveries = (await testbay.webhooks.deliveries(id, { limit })).items;
      if (!session.json) session.print(webhookDetails(webhook, deliveries));
      session.setOutcome({ code: ExitCode.ok, json: { webhook, deliveries } });
    });
  webhooks
    .command("update")
    .description("Change a webhook: only what is given changes")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .option("--url <url>", "where to POST, http(s)")
    .option("--events <events>", "what to send (replaces the list), separated by commas", collectEvents)
    .option("--enable", "send to it again (also after the server disabled it: fix the receiver first)")
    .option("--disable", "stop sending to it; what happens meanwhile is not sent later")
    .option("--description <text>", 'what it is for ("" clears it)')
    .action(
      async (
        id: string,
        options: {
          url?: string;
          events?: string[];
          enable?: boolean;
          disable?: boolean;
          description?: string;
        },
      ) => {
        if (options.enable && options.disable) throw new UsageError("say --enable or --disable, not both.");
        const changes = {
          ...(options.url !== undefined ? { url: options.url } : {}),
          ...(options.events !== undefined ? { events: options.events } : {}),
          ...(options.enable ? { enabled: true } : options.disable ? { enabled: false } : {}),
          ...(options.description !== undefined ? { description: options.description || null } : {}),
        };
        if (Object.keys(changes).length === 0) {
          throw new UsageError(
            "nothing to change: give --url, --events, --enable, --disable or --description.",
          );
        }
        const webhook = await session.testbay().webhooks.update(id, changes);
        session.say(`Updated webhook ${webhook.id}.`);
        if (!session.json) session.print(webhookTable([webhook]));
        session.setOutcome({ code: ExitCode.ok, json: webhook });
      },
    );
  webhooks
    .command("delete")
    .description("Delete a webhook: nothing more is sent to it, and its delivery log goes with it")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .action(async (id: string) => {
      await session.testbay().webhooks.delete(id);
      session.say(`Deleted webhook ${id}: nothing more is sent to it, and its delivery log is gone.`);
      session.setOutcome({ code: ExitCode.ok, json: { id, deleted: true } });
    });
  webhooks
    .command("rotate-secret")
    .description("Give a webhook a new signing secret, printed this once; the old one stops at once")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .action(async (id: string) => {
      const rotated = await session.testbay().webhooks.rotateSecret(id);
      session.say(
        `New signing secret of ${rotated.id} printed ${session.json ? 'as "secret"' : "on stdout"}, this once: the old one no longer verifies, so give the receiver this one now (retries of earlier messages are signed with it too).`,
      );
      if (!session.json) session.print(`${rotated.secret}\n`);
      session.setOutcome({ code: ExitCode.ok, json: rotated });
    });
  webhooks
    .command("test")
    .description("Send a webhook.test message to a webhook, whatever its events")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .action(async (id: string) => {
      const accepted = await session.testbay().webhooks.test(id);
      session.say(
        `Queued a webhook.test message (${accepted.delivery_id}) for ${id}; see how it went with testbay webhooks show ${id}`,
      );
      session.setOutcome({ code: ExitCode.ok, json: accepted });
    });
  webhooks
    .command("redeliver")
    .description("Send a message again, under the same webhook-id, from the start of the retry schedule")
    .argument("<webhook_id>", "webhook ID (wh_…)")
    .argument("<delivery_id>", "the message's ID (msg_…, as testbay webhooks show lists it)")
    .action(async (id: string, deliveryId: string) => {
      const accepted = await session.testbay().webhooks.redeliver(id, deliveryId);
      session.say(
        `Queued ${accepted.delivery_id} for ${id} again (the same webhook-id: receivers that deduplicate see a repeat); see how it went with testbay webhooks show ${id}`,
      );
      session.setOutcome({ code: ExitCode.ok, json: accepted });
    });
}
