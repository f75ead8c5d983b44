import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "../../../client/src/sdk/api.generated.ts";
import { currentCsrfToken } from "./csrf.ts";

/**
 * The typed API client: every path and body checked against the OpenAPI document. The session cookie rides
 * along on its own (same origin); a change also carries the session's CSRF token, which the server requires of
 * cookie-authenticated POST, PUT, PATCH and DELETE (API.md §10).
 */
export const api = createClient<paths>({ baseUrl: window.location.origin, credentials: "same-origin" });

const readOnly = new Set(["GET", "HEAD", "OPTIONS"]);

const csrfHeader: Middleware = {
  onRequest({ request }) {
    const token = currentCsrfToken();
    if (!readOnly.has(request.method) && token) request.headers.set("x-csrf-token", token);
    return request;
  },
};

api.use(csrfHeader);
