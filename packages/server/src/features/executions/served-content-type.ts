/**
 * The content type an artifact is served with (API.md §6). Artifacts are whatever a test or an agent wrote,
 * served from the dashboard's own origin: a file sent as `text/html`, `image/svg+xml` or
 * `application/javascript` would run as a page or script of that origin if a browser rendered it. Only
 * types a browser shows without running anything keep their type; everything else is served as
 * `application/octet-stream` (and, by app.ts, with `X-Content-Type-Options: nosniff`, so it is not sniffed
 * back into HTML).
 */
const harmlessTypes = new Set([
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "video/mp4",
  "video/webm",
  "text/plain",
  "application/json",
  // JSON lines (a session's commands.jsonl): no browser renders or runs it.
  "application/x-ndjson",
  "application/xml",
  "text/xml",
  "application/zip",
  "application/pdf",
  "application/octet-stream",
]);

export const opaqueContentType = "application/octet-stream";

/** The stored type when it is harmless (parameters such as `; charset=utf-8` kept), else octet-stream. */
export function servedContentType(stored: string | null | undefined): string {
  if (!stored) return opaqueContentType;
  const essence = stored.split(";", 1)[0]?.trim().toLowerCase() ?? "";
  return harmlessTypes.has(essence) ? stored : opaqueContentType;
}
