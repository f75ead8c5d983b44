import type { FastifyRequest } from "fastify";
import type { Clock } from "../../clock.ts";
import type { ClientRole } from "../../db/schema.ts";
import { ApiError } from "../../errors.ts";
import { invalidToken, type SessionAuthentication } from "../auth/index.ts";
import { csrfRefusal, originOf } from "./csrf.ts";
import type { SessionRecord } from "./people.repo.ts";
import { type PeopleService, sessionIdleMs } from "./people.service.ts";
import { changesState, clientRoleOf, personRefusal } from "./person-roles.ts";
import { sessionIdFromCookies } from "./session-cookie.ts";
import { csrfTokenFor } from "./session-ids.ts";

/** What each role a person may lack lets them do: the remedy names it. */
const roleRemedies: Record<"member" | "admin" | "agent", string> = {
  member:
    "This needs the member role (create and edit plans, upload, trigger, cancel): ask an administrator of your organization to give it to you.",
  admin: "This needs the admin role (manage clients and people): ask an administrator of your organization.",
  agent:
    "This is the agent protocol, for device hosts only: run an agent with agent client credentials (testbay-server client create --role agent) instead of calling it as a person.",
};

/** Cookie authentication of people for /v1 (API.md §10), plugged into the authentication hook. */
export class CookieSessionAuthentication implements SessionAuthentication {
  /** Origins a same-origin request may name besides its own Host: TESTBAY_PUBLIC_URL's. */
  private readonly configuredOrigins: string[];

  constructor(
    private readonly people: PeopleService,
    private readonly clock: Clock,
    publicUrl: string | undefined,
  ) {
    const configured = publicUrl === undefined ? undefined : originOf(publicUrl);
    this.configuredOrigins = configured ? [configured] : [];
  }

  sessionIdOf(request: FastifyRequest): string | undefined {
    return sessionIdFromCookies(request);
  }

  /** The person's live session, or 401 `invalid_access_token` (reason `session_expired`). */
  async resume(sessionId: string): Promise<SessionRecord> {
    const session = await this.people.resumeSession(sessionId);
    if (!session) {
      throw invalidToken(
        "session_expired",
        "The session cookie names no live session: it was signed out, left idle for 12 hours, or its account was disabled.",
        "",
      );
    }
    return session;
  }

  /** 403 `forbidden`, reason `csrf`, unless a state-changing request proves it comes from the dashboard. */
  checkCsrf(request: FastifyRequest, sessionId: string): void {
    if (!changesState(request.method)) return;
    const presented = request.headers["x-csrf-token"];
    const refusal = csrfRefusal({
      presentedToken: typeof presented === "string" ? presented : undefined,
      expectedToken: csrfTokenFor(sessionId),
      origin: typeof request.headers.origin === "string" ? request.headers.origin : undefined,
      sameOrigins: [`${request.protocol}://${request.host}`.toLowerCase(), ...this.configuredOrigins],
    });
    if (refusal) {
      throw new ApiError("forbidden", {
        reason: "csrf",
        detail: refusal,
        fix: "Changes made with the session cookie must come from the dashboard's own origin and carry the x-csrf-token header from GET /auth/session. Scripts and pipelines use an access token in x-api-key instead.",
      });
    }
  }

  async admit(
    request: FastifyRequest,
    sessionId: string,
    allowed: readonly ClientRole[] | undefined,
  ): Promise<void> {
    const { user } = await this.resume(sessionId);
    this.checkCsrf(request, sessionId);
    request.principal = {
      clientId: user.id,
      organizationId: user.organizationId,
      organizationName: user.organizationName,
      role: clientRoleOf(user.role),
      tokenExpiresAt: this.clock.now() + sessionIdleMs,
      person: { userId: user.id, email: user.email, role: user.role },
    };
    const refusal = personRefusal(user.role, allowed, request.method);
    if (refusal) {
      throw new ApiError("forbidden", {
        reason: "role",
        detail: `A person with role ${user.role} may not call ${request.method} ${request.routeOptions.url}.`,
        fix: roleRemedies[refusal.needs],
      });
    }
  }
}
