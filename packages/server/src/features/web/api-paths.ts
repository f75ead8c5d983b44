/**
 * Paths that belong to the API and the server's own pages, never to the dashboard: an unknown one among them
 * keeps its JSON 404 (route_not_found) instead of answering the dashboard's index.html.
 */
const apiPrefixes = [
  "/v1",
  "/auth",
  "/docs",
  "/downloads",
  "/problems",
  "/healthz",
  "/readyz",
  "/.well-known",
];

export function isApiPath(pathname: string): boolean {
  return apiPrefixes.some((prefix) => pathname === prefix || pathname.startsWith(`${prefix}/`));
}

/** A browser navigating (address bar, link, reload) asks for HTML; fetch() and API clients do not. */
export function wantsHtml(accept: string | undefined): boolean {
  return accept?.includes("text/html") === true;
}
