import websocket from "@fastify/websocket";
import type { FastifyInstance } from "fastify";
import type { Clock } from "../../../clock.ts";
import { principalOf } from "../../../http/principal.ts";
import type { ChannelRegistry } from "./channel-registry.ts";

/** A command's answer may be a screenshot or a page source of several MiB; what an agent may send in one frame. */
export const maxFrameBytes = 128 * 1024 * 1024;

/**
 * Closes the connection of an upgrade request answered over HTTP (refused by a hook: 401, 403, 400; or sent to
 * a path that is no WebSocket): @fastify/websocket hands every upgrade request to the router, and the socket,
 * which Node no longer manages once it emitted 'upgrade', would stay open for as long as the client likes.
 * A root hook (channel.feature.ts registers it): upgrade requests reach every route.
 */
export function closeAnsweredUpgrades(app: FastifyInstance): void {
  app.addHook("onResponse", (request, _reply, done) => {
    if (request.headers.upgrade !== undefined) request.raw.socket.destroy();
    done();
  });
}

/** The same rule as a claim's agent_id (agent.schemas.ts). */
const agentIdPattern = /^[A-Za-z0-9._@-]{1,100}$/;

/**
 * `GET /v1/agent/channel?agent_id=…`: the agent's WebSocket for relayed WebDriver commands (API.md §12, "The
 * relay"; docs/appium-relay.md, "The channel"). The upgrade request goes through every hook an agent call does
 * (@fastify/websocket routes it before upgrading): `x-api-key` with an agent client's token, or it is refused
 * with the usual problem document (401, 403) and never upgraded. The agent is the one its `agent_id` names
 * within the token's organization, as in its claims.
 */
export async function channelRoutes(
  app: FastifyInstance,
  { registry, clock }: { registry: ChannelRegistry; clock: Clock },
): Promise<void> {
  await app.register(websocket, { options: { maxPayload: maxFrameBytes } });
  app.get<{ Querystring: { agent_id: string } }>(
    "/v1/agent/channel",
    {
      websocket: true,
      config: { auth: ["agent"] },
      schema: {
        hide: true,
        querystring: {
          type: "object",
          required: ["agent_id"],
          properties: { agent_id: { type: "string", pattern: agentIdPattern.source } },
        },
      },
    },
    (socket, request) => {
      const principal = principalOf(request);
      registry.accept(
        { organizationId: principal.organizationId, agentId: request.query.agent_id },
        socket,
        principal.tokenExpiresAt - clock.now(),
      );
    },
  );
}
