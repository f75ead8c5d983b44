import type { ClientRole, PersonRole } from "../db/schema.ts";

/** Who is calling: set by the authentication hook on every authenticated request. */
export interface Principal {
  /** The client's ID; for a signed-in person, their user ID (`usr_…`): what runs record as who triggered them. */
  clientId: string;
  organizationId: string;
  organizationName: string;
  /** For a person, the client role whose calls their role opens (see people/person-roles.ts). */
  role: ClientRole;
  /** When the token expires; for a person, when the session would end if left idle from now. */
  tokenExpiresAt: number;
  /** An agent client made with `--all-orgs` (API.md §15): it claims, and holds leases of, every organization's runs. */
  allOrganizations?: true;
  /** Set when a person signed in to the dashboard makes the request with their session cookie. */
  person?: { userId: string; email: string; role: PersonRole };
}

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * Who may call the route: `"public"` for anyone, or the roles allowed. Unset means any authenticated
     * client, so a route has to opt out of authentication, never into it.
     */
    auth?: "public" | readonly ClientRole[];
    /**
     * `"skip"`: not rate limited (health probes); `"route"`: the route limits itself (the token endpoint,
     * keyed by the client_id in its body). Unset: limited per authenticated client, or per IP for public routes.
     */
    rateLimit?: "skip" | "route";
    /**
     * The route answers `Expect: 100-continue` itself, once it has decided from the headers that it wants the
     * body (uploads). Every other route sends 100 Continue as soon as the request is authenticated.
     */
    deferContinue?: boolean;
    /** The token endpoint: its error bodies also carry OAuth's `error` and `error_description`. */
    oauthErrors?: boolean;
    /**
     * The body is what agents report from devices and tools (log lines, test names): text that no database
     * can store is escaped where it is stored instead of refused (API.md §2). Path and query are still checked.
     */
    deviceText?: boolean;
  }

  interface FastifyRequest {
    principal?: Principal;
  }
}
