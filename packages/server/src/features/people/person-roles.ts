import type { ClientRole, PersonRole } from "../../db/schema.ts";

/**
 * The client role whose calls a person's role opens (API.md §10): a member may do what a `ci` client may
 * (create and edit plans, upload, trigger, cancel), an admin what an `admin` client may. A viewer only reads,
 * which `personRefusal` enforces; the `ci` here only picks the rate-limit policy and what GET /v1/me says.
 */
export function clientRoleOf(role: PersonRole): ClientRole {
  return role === "admin" ? "admin" : "ci";
}

const readMethods = new Set(["GET", "HEAD"]);

/** Methods that change state: a cookie-authenticated one must pass the CSRF check. */
export function changesState(method: string): boolean {
  return !readMethods.has(method) && method !== "OPTIONS";
}

/**
 * Whether a person with `role` may call a route that admits the client roles `allowed` (undefined: any
 * authenticated caller) with `method`. Returns undefined when they may, else the role they would need, as
 * the remedy names it. Agent-only routes (the agent protocol) are for machines: no person role opens them.
 */
export function personRefusal(
  role: PersonRole,
  allowed: readonly ClientRole[] | undefined,
  method: string,
): { needs: "member" | "admin" | "agent" } | undefined {
  if (allowed === undefined) {
    if (!changesState(method) || role !== "viewer") return undefined;
    return { needs: "member" };
  }
  if (allowed.includes(clientRoleOf(role)) && (role !== "viewer" || !changesState(method))) {
    return undefined;
  }
  if (allowed.includes("ci")) return { needs: "member" };
  if (allowed.includes("admin")) return { needs: "admin" };
  return { needs: "agent" };
}
