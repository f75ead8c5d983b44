// `testbay webhooks …` against a real server: a webhook created with its secret shown once, listed, shown with its
// delivery log after a test message reached a real receiver, changed, given a new secret, redelivered and
// deleted, as a person reads it and as --json; the server's refusals come with their fix (exit 4), the CLI's own
// (exit 2) before anything is sent.
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TestReceiver } from "../../../server/src/features/webhooks/test-receiver.ts";
import { startTestServer, type TestServer } from "../../../server/test/harness.ts";
import { inProcessCli } from "../../test/in-process-cli.ts";

let server: TestServer;
let receiver: TestReceiver;
let dir: string;
let ci: Awaited<ReturnType<TestServer["createClient"]>>;
let token: string;

const cli = inProcessCli(() => ({ server, credentials: ci, cwd: dir, token }));

/** `webhooks create` with --json: the API's object, secret included. */
async function created(url: string, ...more: string[]) {
  const run = await cli([
    "webhooks",
    "create",
    "--url",
    url,
    "--events",
    "execution.finished",
    ...more,
    "--json",
  ]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout) as { id: string; secret?: string; exit_code: number };
}

/** `webhooks show --json` once its newest delivery is no longer pending: the sender records it after the answer. */
async function shownOnceSettled(id: string) {
  const until = Date.now() + 30_000;
  for (;;) {
    const run = await cli(["webhooks", "show", id, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    const shown = JSON.parse(run.stdout);
    if (shown.deliveries[0] && shown.deliveries[0].status !== "pending") return shown;
    if (Date.now() > until) throw new Error(`the delivery never settled: ${run.stdout}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

beforeAll(async () => {
  // Receivers on 127.0.0.1 are private addresses: allowed here as on-premises receivers are.
  server = await startTestServer({
    env: { TESTBAY_RATE_LIMIT_BURST: "100000", TESTBAY_WEBHOOK_ALLOW_PRIVATE: "true" },
  });
  receiver = await TestReceiver.start();
  dir = await mkdtemp(path.join(tmpdir(), "testbay-webhooks-"));
  ci = await server.createClient("acme", "ci");
  token = await server.token(ci);
});

afterAll(async () => {
  await receiver?.close();
  await server?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe("testbay webhooks", () => {
  it("create prints the secret once on stdout and says to store it and how receivers verify", async () => {
    const run = await cli([
      "webhooks",
      "create",
      "--url",
      "https://hooks.example.com/deploy-gate",
      "--events",
      "execution.started,execution.finished",
      "--description",
      "deploy gate",
    ]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^whsec_[A-Za-z0-9+/]{43}=\n$/);
    expect(run.stderr).toMatch(
      /^Created webhook wh_\S+: execution\.started, execution\.finished to https:\/\/hooks\.example\.com\/deploy-gate\./,
    );
    expect(run.stderr).toContain("printed on stdout, this once: store it now");
    expect(run.stderr).toContain("Standard Webhooks");
    expect(run.stderr).toContain("webhook-signature");

    const json = await cli([
      "webhooks",
      "create",
      "--url",
      "https://hooks.slack.com/services/T0/B0/x",
      "--events",
      "execution.finished",
      "--format",
      "slack",
      "--json",
    ]);
    expect(json.code, json.stderr).toBe(0);
    expect(JSON.parse(json.stdout)).toEqual({
      id: expect.stringMatching(/^wh_/),
      url: "https://hooks.slack.com/services/T0/B0/x",
      events: ["execution.finished"],
      format: "slack",
      description: null,
      enabled: true,
      disabled_reason: null,
      created_at: expect.any(String),
      exit_code: 0,
    });
    expect(json.stderr).toContain("Slack webhooks are not signed");
  });

  it("list shows every webhook with its events, format and state, never a secret; --json the API objects", async () => {
    const run = await cli(["webhooks", "list"]);
    expect(run.code, run.stderr).toBe(0);
    const lines = run.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^WEBHOOK\s+URL\s+EVENTS\s+FORMAT\s+STATE\s+DESCRIPTION$/);
    expect(run.stdout).toMatch(
      /https:\/\/hooks\.example\.com\/deploy-gate\s+execution\.started,execution\.finished\s+standard\s+enabled\s+deploy gate/,
    );
    expect(run.stdout).toMatch(
      /hooks\.slack\.com\/services\/T0\/B0\/x\s+execution\.finished\s+slack\s+enabled\s+-/,
    );
    expect(run.stdout).not.toContain("whsec_");

    const json = await cli(["webhooks", "list", "--json"]);
    const listed = JSON.parse(json.stdout);
    // Both were made at the same instant of the server's manual clock: newest first cannot order them.
    expect(listed.items.map((w: { url: string }) => w.url).sort()).toEqual([
      "https://hooks.example.com/deploy-gate",
      "https://hooks.slack.com/services/T0/B0/x",
    ]);
    expect(json.stdout).not.toContain("whsec_");
  });

  it("test sends webhook.test to the receiver, signed, and show lists it delivered with its answer", async () => {
    const webhook = await created(receiver.url, "--description", "local receiver");
    receiver.secret = webhook.secret;

    const sent = await cli(["webhooks", "test", webhook.id]);
    expect(sent.code, sent.stderr).toBe(0);
    expect(sent.stderr).toMatch(
      new RegExp(
        `^Queued a webhook\\.test message \\(msg_\\S+\\) for ${webhook.id}; see how it went with testbay webhooks show ${webhook.id}`,
      ),
    );
    const [request] = await receiver.requests(1);
    expect(request?.verifyError).toBeUndefined();
    expect(request?.verified).toMatchObject({ type: "webhook.test", data: { webhook_id: webhook.id } });

    const shown = await shownOnceSettled(webhook.id);
    expect(shown.webhook).toMatchObject({ id: webhook.id, url: receiver.url, enabled: true });
    expect(shown.webhook).not.toHaveProperty("secret");
    expect(shown.deliveries).toEqual([
      expect.objectContaining({
        id: request?.headers["webhook-id"],
        type: "webhook.test",
        status: "delivered",
        attempts: [expect.objectContaining({ status_code: 200, error: null })],
      }),
    ]);

    const person = await cli(["webhooks", "show", webhook.id]);
    expect(person.code, person.stderr).toBe(0);
    expect(person.stdout).toContain(`Webhook ${webhook.id}\n  url:         ${receiver.url}\n`);
    expect(person.stdout).toContain("  format:      standard (signed per Standard Webhooks)\n");
    expect(person.stdout).toContain("  state:       enabled\n");
    expect(person.stdout).toContain("Last deliveries, newest first:\n");
    expect(person.stdout).toMatch(
      new RegExp(
        `${request?.headers["webhook-id"]}\\s+webhook\\.test\\s+delivered\\s+1\\s+\\S+\\s+HTTP 200\\s+-\\n`,
      ),
    );
  });

  it("show of a webhook never sent to says how to send a test", async () => {
    const webhook = await created("https://hooks.example.com/quiet");
    const run = await cli(["webhooks", "show", webhook.id]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(
      `No deliveries yet: testbay webhooks test ${webhook.id} sends a webhook.test message.`,
    );
  });

  it("redeliver sends the same message again under its webhook-id", async () => {
    const webhook = await created(receiver.url);
    receiver.secret = webhook.secret;
    const before = receiver.received.length;
    await cli(["webhooks", "test", webhook.id]);
    const first = (await receiver.requests(before + 1)).at(-1);
    const messageId = String(first?.headers["webhook-id"]);
    await shownOnceSettled(webhook.id);

    const run = await cli(["webhooks", "redeliver", webhook.id, messageId, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ delivery_id: messageId, exit_code: 0 });
    expect(run.stderr).toContain(`Queued ${messageId} for ${webhook.id} again (the same webhook-id`);
    const again = (await receiver.requests(before + 2)).at(-1);
    expect(again?.headers["webhook-id"]).toBe(messageId);
    expect(again?.verifyError).toBeUndefined();
  });

  it("update changes only what is given: disable, enable, events, a cleared description", async () => {
    const webhook = await created("https://hooks.example.com/changing", "--description", "to be cleared");
    const disabled = await cli(["webhooks", "update", webhook.id, "--disable"]);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stderr).toContain(`Updated webhook ${webhook.id}.`);
    expect(disabled.stdout).toMatch(/execution\.finished\s+standard\s+disabled\s+to be cleared\n$/);

    const changed = await cli([
      "webhooks",
      "update",
      webhook.id,
      "--enable",
      "--events",
      "version.uploaded,test.flaky_detected",
      "--description",
      "",
      "--json",
    ]);
    expect(changed.code, changed.stderr).toBe(0);
    expect(JSON.parse(changed.stdout)).toMatchObject({
      id: webhook.id,
      url: "https://hooks.example.com/changing",
      events: ["version.uploaded", "test.flaky_detected"],
      enabled: true,
      disabled_reason: null,
      description: null,
    });
  });

  it("rotate-secret prints a new secret once; the old one is gone", async () => {
    const webhook = await created("https://hooks.example.com/rotating");
    const run = await cli(["webhooks", "rotate-secret", webhook.id]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/^whsec_[A-Za-z0-9+/]{43}=\n$/);
    expect(run.stdout.trim()).not.toBe(webhook.secret);
    expect(run.stderr).toContain(`New signing secret of ${webhook.id} printed on stdout, this once`);

    const json = await cli(["webhooks", "rotate-secret", webhook.id, "--json"]);
    const rotated = JSON.parse(json.stdout);
    expect(rotated).toMatchObject({ id: webhook.id, secret: expect.stringMatching(/^whsec_/) });
    expect(rotated.secret).not.toBe(run.stdout.trim());
  });

  it("delete removes it: show then answers 404 with exit 4", async () => {
    const webhook = await created("https://hooks.example.com/deleted");
    const run = await cli(["webhooks", "delete", webhook.id, "--json"]);
    expect(run.code, run.stderr).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ id: webhook.id, deleted: true, exit_code: 0 });
    expect(run.stderr).toContain(`Deleted webhook ${webhook.id}`);

    const shown = await cli(["webhooks", "show", webhook.id]);
    expect(shown.code).toBe(4);
    expect(shown.stderr).toContain(`error: webhook_not_found`);
  });

  it("after webhooks create|update, --url is the webhook's; the API's URL comes before `webhooks`", async () => {
    // TESTBAY_URL points nowhere: the API's URL given before `webhooks` is the one used.
    const env = { TESTBAY_URL: "http://127.0.0.1:9/v1" };
    const api = ["--url", server.baseUrl, "webhooks"];
    const run = await cli(
      [...api, "create", "--url=https://hooks.example.com/flags", "--events", "version.uploaded", "--json"],
      { env },
    );
    expect(run.code, run.stderr).toBe(0);
    const webhook = JSON.parse(run.stdout);
    expect(webhook).toMatchObject({ url: "https://hooks.example.com/flags", events: ["version.uploaded"] });

    const moved = await cli(
      [...api, "update", webhook.id, "--url", "https://hooks.example.com/moved", "--json"],
      { env },
    );
    expect(moved.code, moved.stderr).toBe(0);
    expect(JSON.parse(moved.stdout)).toMatchObject({
      id: webhook.id,
      url: "https://hooks.example.com/moved",
    });

    const missing = await cli(["webhooks", "create", "--events", "version.uploaded"]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toBe("error: say where to POST with --url URL.\n");
    const noEvents = await cli(["webhooks", "create", "--url", "https://hooks.example.com/x"]);
    expect(noEvents.code).toBe(2);
    expect(noEvents.stderr).toContain("required option '--events <events>' not specified");
  });

  it("the global --url stands before or after a command; between `webhooks` and `create` it is the API's", async () => {
    const env = { TESTBAY_URL: "http://127.0.0.1:9/v1" };
    const after = await cli(["webhooks", "list", "--url", server.baseUrl, "--json"], { env });
    expect(after.code, after.stderr).toBe(0);

    const between = await cli(
      [
        "webhooks",
        "--url",
        server.baseUrl,
        "create",
        "--url",
        "https://hooks.example.com/between",
        "--events",
        "version.uploaded",
        "--json",
      ],
      { env },
    );
    expect(between.code, between.stderr).toBe(0);
    const webhook = JSON.parse(between.stdout);
    expect(webhook).toMatchObject({ url: "https://hooks.example.com/between" });

    // Given twice, the later --url wins, as it did when the program took both.
    const twice = await cli([
      "--url",
      "http://127.0.0.1:9/v1",
      "webhooks",
      "show",
      webhook.id,
      "--url",
      server.baseUrl,
    ]);
    expect(twice.code, twice.stderr).toBe(0);
    expect(twice.stdout).toContain("https://hooks.example.com/between");
  });

  it("an unknown event is the API's 400 with its fix (exit 4); --json says the same", async () => {
    const args = [
      "webhooks",
      "create",
      "--url",
      "https://hooks.example.com/x",
      "--events",
      "execution.finshed",
    ];
    const run = await cli(args);
    expect(run.code).toBe(4);
    expect(run.stdout).toBe("");
    expect(run.stderr).toMatch(/^error: invalid_request.*400 on POST \/webhooks/);
    expect(run.stderr).toContain(
      "  fix: Subscribe to one or more of: execution.started, execution.finished, version.uploaded, test.flaky_detected",
    );

    const json = await cli([...args, "--json"]);
    expect(json.code).toBe(4);
    expect(JSON.parse(json.stdout)).toMatchObject({
      error: {
        status: 400,
        code: "invalid_request",
        fix: expect.stringContaining("Subscribe to one or more of"),
      },
      exit_code: 4,
    });
  });

  it("refuses what it can tell is wrong before sending anything (exit 2)", async () => {
    const both = await cli(["webhooks", "update", "wh_x", "--enable", "--disable"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toBe("error: say --enable or --disable, not both.\n");
    const nothing = await cli(["webhooks", "update", "wh_x"]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain("nothing to change");
    const format = await cli([
      "webhooks",
      "create",
      "--url",
      "https://hooks.example.com/x",
      "--events",
      "execution.finished",
      "--format",
      "teams",
    ]);
    expect(format.code).toBe(2);
    expect(format.stderr).toBe("error: --format teams: say standard or slack.\n");
    for (const run of [both, nothing, format]) {
      expect(run.responses.filter((r) => r.path.startsWith("/webhooks"))).toEqual([]);
    }
  });
});
