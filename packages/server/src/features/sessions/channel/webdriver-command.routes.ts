import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { ApiError } from "../../../errors.ts";
import { type W3cErrorAnswer, w3cErrorAnswer } from "../w3c-errors.ts";
import type { AgentAddress, RelayedAnswer, RelayedCommand } from "./channel-messages.ts";
import type { Relay } from "./relay.ts";
import type { SessionDirectory } from "./session-directory.ts";
import { webDriverCallerOf } from "./webdriver-caller.ts";

/**
 * A command's body: screenshots and page sources come back in answers, but files pushed to the device (Appium's
 * pushFile, installApp with a base64 app) come in bodies, so the limit is well above the API's 1 MiB.
 */
export const commandBodyLimit = 64 * 1024 * 1024;

const prefix = "/wd/hub/session/";

/**
 * Commands Testbay answers itself instead of relaying: API.md §12's `setSessionStatus` script through
 * `/execute/sync` (features/sessions). Returns the answer, or undefined to relay the command.
 */
export type AnswerHere = (command: RelayedCommand, agent: AgentAddress) => Promise<RelayedAnswer | undefined>;

/**
 * The WebDriver commands of a session (API.md §12): `/wd/hub/session/{id}/…` with any method and
 * `DELETE /wd/hub/session/{id}`, relayed as they are to the agent holding the session's device, and Appium's
 * status and body returned as they are. Errors are W3C error bodies only, never problem documents: WebDriver
 * clients read nothing else. Not rate limited (only new sessions are) and not authenticated: the session ID
 * addresses the session (see session-directory.ts for credentials that name another client).
 */
export async function webDriverCommandRoutes(
  app: FastifyInstance,
  { directory, relay, answerHere }: { directory: SessionDirectory; relay: Relay; answerHere?: AnswerHere },
): Promise<void> {
  // Bodies as text, parsed here: an empty body (some clients send none with a POST) or one that is not JSON is a
  // W3C `invalid argument`, not a problem document from Fastify's parser.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser("*", { parseAs: "string" }, (_request, body, done) => done(null, body));
  app.setErrorHandler((error: FastifyError, request, reply) => {
    if (error instanceof ApiError && error.status < 500) {
      return sendAnswer(reply, w3cErrorAnswer("invalid argument", error.detail));
    }
    if (error.statusCode !== undefined && error.statusCode < 500) {
      return sendAnswer(reply, w3cErrorAnswer("invalid argument", error.message));
    }
    request.log.error({ err: error }, "WebDriver command failed");
    return sendAnswer(reply, w3cErrorAnswer("unknown error", "Testbay could not relay the command."));
  });

  const relayCommand = async (request: FastifyRequest<{ Params: { id: string } }>, reply: FastifyReply) => {
    const sessionId = request.params.id;
    const found = await directory.find(sessionId, webDriverCallerOf(request));
    if (!found) {
      return sendAnswer(
        reply,
        w3cErrorAnswer("invalid session id", `No active session with ID ${sessionId}.`),
      );
    }
    if ("ended" in found) return sendAnswer(reply, w3cErrorAnswer("invalid session id", found.ended));
    const body = readBody(request);
    if (body instanceof Error) return sendAnswer(reply, w3cErrorAnswer("invalid argument", body.message));
    const agent = { organizationId: found.organizationId, agentId: found.agentId };
    const command: RelayedCommand = {
      session: sessionId,
      method: request.method,
      path: pathBelowSession(request.url, sessionId),
      ...(body === undefined ? {} : { body }),
    };
    const answer = (await answerHere?.(command, agent)) ?? (await relay.send(agent, command));
    // Over, or unknown where it was relayed: the next command reads why from the database.
    if (command.path === "" || isInvalidSessionId(answer)) directory.forget(sessionId);
    return sendAnswer(reply, answer);
  };

  const config = { auth: "public", rateLimit: "skip" } as const;
  const schema = { hide: true };
  app.route({
    method: ["GET", "POST", "DELETE"],
    url: `${prefix}:id/*`,
    config,
    schema,
    bodyLimit: commandBodyLimit,
    handler: relayCommand,
  });
  app.route({ method: "DELETE", url: `${prefix}:id`, config, schema, handler: relayCommand });
}

/** The command's path below `/session/{id}`, as the client encoded it (`""` for the session itself). */
export function pathBelowSession(url: string, sessionId: string): string {
  const path = url.split("?", 1)[0] ?? "";
  const start = path.indexOf("/", prefix.length);
  return start === -1 || !path.startsWith(prefix) || sessionId === "" ? "" : path.slice(start);
}

/** The parsed JSON body; undefined for GET/DELETE and for an empty body; an Error when it is not JSON. */
function readBody(request: FastifyRequest): unknown {
  if (request.method === "GET" || request.method === "DELETE") return undefined;
  const text = typeof request.body === "string" ? request.body : "";
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return new Error("The command's body is not JSON.");
  }
}

function isInvalidSessionId(answer: RelayedAnswer): boolean {
  const value = (answer.body as { value?: { error?: unknown } } | null)?.value;
  return answer.status === 404 && value?.error === "invalid session id";
}

function sendAnswer(reply: FastifyReply, answer: W3cErrorAnswer | { status: number; body: unknown }) {
  return reply
    .code(answer.status)
    .header("cache-control", "no-store")
    .type("application/json; charset=utf-8")
    .send(JSON.stringify(answer.body));
}
