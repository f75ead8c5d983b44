import type { FastifyInstance } from "fastify";
import type { ChannelRelay } from "./relay.ts";
import { type ForwardedMessage, internalRelayPath } from "./relay-forwarder.ts";
import { type RelaySignature, relaySignatureHeader } from "./relay-signature.ts";

/** A forwarded command's body: a WebDriver command's, plus the envelope (the bodies of `/wd/hub` commands). */
export const forwardedBodyLimit = 64 * 1024 * 1024 + 64 * 1024;

/**
 * `POST /v1/internal/relay`: a command another instance forwarded to this one, the holder of the agent's channel
 * (docs/appium-relay.md, "Several instances"). Only instances of the deployment can sign one (relay-signature.ts);
 * anything else is answered as an unknown path, before its body is read as a command, and is never relayed.
 * Not in the OpenAPI document: it is no part of the API.
 */
export async function relayInternalRoutes(
  app: FastifyInstance,
  { relay, signature }: { relay: ChannelRelay; signature: RelaySignature },
): Promise<void> {
  // The signature covers the exact bytes sent: read them as text, parse after checking.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("application/json", { parseAs: "string" }, (_request, body, done) =>
    done(null, body),
  );
  app.post(
    internalRelayPath,
    {
      config: { auth: "public", rateLimit: "skip" },
      bodyLimit: forwardedBodyLimit,
      schema: { hide: true },
    },
    async (request, reply) => {
      const text = typeof request.body === "string" ? request.body : "";
      const header = request.headers[relaySignatureHeader];
      if (!signature.verify(typeof header === "string" ? header : undefined, text)) {
        return reply.callNotFound();
      }
      const forwarded = readForwarded(text);
      if (!forwarded) return reply.callNotFound();
      if ("moved" in forwarded) {
        // Answered at once: the sender goes on with its new channel while the commands come over.
        void relay.movedAway(forwarded.agent);
        return reply.code(204).send();
      }
      const answer = await relay.sendForwarded(forwarded.agent, forwarded.command, forwarded.id);
      if (answer === "elsewhere") return reply.code(409).send();
      return reply.code(200).type("application/json; charset=utf-8").send(JSON.stringify(answer));
    },
  );
}

function readForwarded(text: string): ForwardedMessage | undefined {
  let value: {
    agent?: Partial<ForwardedMessage["agent"]>;
    command?: Record<string, unknown>;
    id?: unknown;
    moved?: unknown;
  };
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const { agent, command } = value;
  if (typeof agent?.organizationId !== "string" || typeof agent.agentId !== "string") return undefined;
  const address = { organizationId: agent.organizationId, agentId: agent.agentId };
  if (value.moved === true) return { agent: address, moved: true };
  if (
    typeof command?.session !== "string" ||
    typeof command.method !== "string" ||
    typeof command.path !== "string" ||
    (value.id !== undefined && typeof value.id !== "string")
  ) {
    return undefined;
  }
  return {
    agent: address,
    command: {
      session: command.session,
      method: command.method,
      path: command.path,
      ...("body" in command ? { body: command.body } : {}),
      ...(command.end === "cancelled" ? { end: "cancelled" as const } : {}),
    },
    ...(typeof value.id === "string" ? { id: value.id } : {}),
  };
}
