import type { IncomingMessage } from "node:http";
import { newId } from "../ids.ts";

const acceptable = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Keeps a caller's or proxy's `X-Request-Id` when it is a plain token, so one ID follows a request through
 * the proxy's logs and ours; anything else gets a fresh ID.
 */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  return typeof given === "string" && acceptable.test(given) ? given : newId("req");
}
