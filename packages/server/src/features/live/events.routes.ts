import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { principalOf } from "../../http/principal.ts";
import { ProblemResponses } from "../../http/problem.schema.ts";
import { ExecutionId } from "../executions/executions.schemas.ts";
import type { ExecutionChanges } from "./execution-changes.ts";
import { EventStream } from "./server-sent-events.ts";

const EventsQuery = Type.Object({
  execution_id: Type.Optional({
    ...ExecutionId,
    description: "Only this execution's changes (and the organization-wide ones, execution_id null).",
  }),
});

/** GET /v1/events: what the dashboard listens to so its pages change while runs do, without a reload. */
export const eventsRoutes: FastifyPluginAsyncTypebox<{
  changes: ExecutionChanges;
  keepAliveMs?: number;
}> = async (app, { changes, keepAliveMs = 15_000 }) => {
  const open = new Set<EventStream>();
  // A stream never ends on its own: the server's close ends them, else it would wait for every browser.
  app.addHook("preClose", async () => {
    for (const stream of open) stream.end();
  });

  app.get(
    "/v1/events",
    {
      schema: {
        summary: "Live changes of the organization's executions (server-sent events)",
        description:
          'A text/event-stream that stays open. First `event: ready`; then `event: execution` with data `{"execution_id": "ex_…"}` whenever that execution changed (status, devices, test cases, log, artifacts), or `{"execution_id": null}` when several may have (lost leases re-queued). Read the execution again on each: the event says what changed, not how. Changes of one execution within 200 ms come as one event. A comment line every 15 s keeps proxies from closing a quiet stream. Browsers use EventSource (the session cookie authenticates it); after a lost connection they reconnect by themselves after 3 s and should read what they show again, as events in between are not replayed.',
        tags: ["executions"],
        querystring: EventsQuery,
        produces: ["text/event-stream"],
        response: { 200: Type.String({ description: "The event stream" }), ...ProblemResponses },
      },
    },
    async (request, reply) => {
      const { organizationId } = principalOf(request);
      const only = request.query.execution_id;
      const stream = new EventStream({ retryMs: 3000, keepAliveMs });
      open.add(stream);
      const unsubscribe = changes.subscribe(organizationId, (change) => {
        if (only !== undefined && change.executionId !== null && change.executionId !== only) return;
        stream.send("execution", { execution_id: change.executionId });
      });
      // The response's close: the browser went away (or the stream ended): stop listening for it.
      reply.raw.once("close", () => {
        unsubscribe();
        stream.end();
        open.delete(stream);
      });
      stream.send("ready", {});
      return (
        reply
          .type("text/event-stream; charset=utf-8")
          .header("cache-control", "no-cache, no-transform")
          // nginx buffers responses unless told otherwise; events must pass through at once.
          .header("x-accel-buffering", "no")
          .send(stream.body)
      );
    },
  );
};
