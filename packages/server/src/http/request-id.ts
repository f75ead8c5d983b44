import { randomBytes } from "node:crypto";
import type { IncomingMessage } from "node:http";

const acceptable = /^[A-Za-z0-9._:-]{1,64}$/;

/**
 * Request IDs need to be unique, not secret or sortable: a random prefix per process (so instances never
 * collide) and a counter. Cheaper than a random ID per request, which costs a system call.
 */
const processPrefix = `req_${randomBytes(8).toString("base64url")}`;
let counter = 0;

/**
 * Keeps a caller's or proxy's `X-Request-Id` when it is a plain token, so one ID follows a request through
 * the proxy's logs and ours; anything else gets a fresh ID.
 */
export function requestIdFor(request: IncomingMessage): string {
  const given = request.headers["x-request-id"];
  if (typeof given === "string" && acceptable.test(given)) return given;
  counter = (counter + 1) % Number.MAX_SAFE_INTEGER;
  return `${processPrefix}.${counter.toString(36)}`;
}
