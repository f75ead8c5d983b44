import { once } from "node:events";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ResolveAll } from "./address-guard.ts";
import { AttemptSender } from "./send-attempt.ts";

/**
 * AttemptSender against a real HTTP server on 127.0.0.1, reached under made-up names through an injected
 * resolver (there is no DNS here): what the guard does with what a name resolves to, redirects, timeouts.
 */

let receiver: Server;
let port: number;
const hits: string[] = [];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    hits.push(request.url ?? "");
    if (request.url === "/redirect") {
      response.writeHead(302, { location: `http://127.0.0.1:${port}/inside` }).end();
    } else if (request.url === "/silent") {
      // Never answers: the sender must give up by its timeout.
    } else if (request.url === "/big") {
      response.writeHead(500).end("x".repeat(5000));
    } else {
      response.writeHead(200).end("ok");
    }
  });
  receiver.listen(0, "127.0.0.1");
  await once(receiver, "listening");
  port = (receiver.address() as AddressInfo).port;
});
afterAll(() => {
  receiver.closeAllConnections();
  receiver.close();
});

/** Every name resolves to these addresses. */
const resolvingTo =
  (...addresses: string[]): ResolveAll =>
  async () =>
    addresses.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));

function sender(resolveAll: ResolveAll, allowPrivate: boolean, timeoutMs = 10_000) {
  return new AttemptSender({ resolveAll, allowPrivate, timeoutMs });
}

describe("AttemptSender", () => {
  it("refuses a name that resolves to 10.0.0.1, without connecting", async () => {
    const outcome = await sender(resolvingTo("10.0.0.1"), false).send(
      "http://hooks.example.test/x",
      {},
      "{}",
    );
    expect(outcome).toMatchObject({ statusCode: null, error: "address not allowed" });
  });

  it("refuses a name with one private address among public ones", async () => {
    const outcome = await sender(resolvingTo("93.184.216.34", "127.0.0.1"), false).send(
      `http://mixed.example.test:${port}/x`,
      {},
      "{}",
    );
    expect(outcome.error).toBe("address not allowed");
  });

  it("refuses a loopback literal at send time too (a URL stored before the guard, or changed by hand)", async () => {
    const before = hits.length;
    const outcome = await sender(resolvingTo(), false).send(`http://127.0.0.1:${port}/x`, {}, "{}");
    expect(outcome.error).toBe("address not allowed");
    expect(hits.length).toBe(before);
  });

  it("connects to the address the name resolved to when private addresses are allowed", async () => {
    const outcome = await sender(resolvingTo("127.0.0.1"), true).send(
      `http://receiver.example.test:${port}/named`,
      {},
      "{}",
    );
    expect(outcome).toMatchObject({ statusCode: 200, error: null, responseExcerpt: "ok" });
    expect(hits).toContain("/named");
  });

  it("does not follow a redirect to loopback: the 302 is the answer", async () => {
    const outcome = await sender(resolvingTo(), true).send(`http://127.0.0.1:${port}/redirect`, {}, "{}");
    expect(outcome.statusCode).toBe(302);
    expect(outcome.error).toMatch(/^redirect to http:\/\/127\.0\.0\.1:\d+\/inside not followed/);
    expect(hits).not.toContain("/inside");
  });

  it("keeps the first KiB of an answer's body", async () => {
    const outcome = await sender(resolvingTo(), true).send(`http://127.0.0.1:${port}/big`, {}, "{}");
    expect(outcome).toMatchObject({ statusCode: 500, error: "HTTP 500" });
    expect(outcome.responseExcerpt).toBe("x".repeat(1024));
  });

  it("gives up on a receiver that does not answer within the timeout", async () => {
    const outcome = await sender(resolvingTo(), true, 300).send(`http://127.0.0.1:${port}/silent`, {}, "{}");
    expect(outcome).toMatchObject({ statusCode: null, error: "no answer within the timeout" });
  });
});
