import type { Socket } from "node:net";
import type { ConnectionError } from "fastify";
import { ApiError, toProblem } from "../errors.ts";
import { newId } from "../ids.ts";

/**
 * Answers requests that Node's HTTP parser rejects before Fastify sees them (oversized or broken headers)
 * with the same problem documents as every other error, then closes the connection.
 */
export function answerClientError(error: ConnectionError, socket: Socket): void {
  // A reset or timed-out connection has nobody left to answer.
  const code = (error as { code?: string }).code;
  if (code === "ECONNRESET" || code === "ERR_HTTP_REQUEST_TIMEOUT" || !socket.writable) {
    socket.destroy();
    return;
  }
  const apiError =
    code === "HPE_HEADER_OVERFLOW"
      ? new ApiError("headers_too_large", {
          detail: "The request's headers are larger than this server accepts.",
        })
      : new ApiError("invalid_request", {
          detail: "The request is not well-formed HTTP/1.1 (a header line or the request line is broken).",
          fix: "Send a well-formed HTTP request; check for stray line breaks or spaces in header names and values.",
        });
  const body = JSON.stringify(toProblem(apiError, newId("req")));
  const reason = apiError.status === 431 ? "Request Header Fields Too Large" : "Bad Request";
  socket.end(
    `HTTP/1.1 ${apiError.status} ${reason}\r\nContent-Type: application/problem+json\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}
