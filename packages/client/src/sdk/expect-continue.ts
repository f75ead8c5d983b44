import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { Readable } from "node:stream";
import type { FetchLike } from "./transport.ts";

/**
 * How long to wait for `100 Continue` before sending the body anyway: a proxy in between may not pass the
 * interim answer on, and RFC 9110 §10.1.1 lets a client go ahead after a while.
 */
export const continueTimeoutMs = 3000;

function toResponse(message: IncomingMessage, method: string): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    if (value === undefined) continue;
    for (const one of Array.isArray(value) ? value : [value]) headers.append(name, one);
  }
  const status = message.statusCode ?? 502;
  const empty = method === "HEAD" || status === 204 || status === 304;
  if (empty) message.resume();
  return new Response(empty ? null : (Readable.toWeb(message) as unknown as ReadableStream<Uint8Array>), {
    status,
    statusText: message.statusMessage ?? "",
    headers,
  });
}

/**
 * A fetch for streamed uploads that sends `Expect: 100-continue` and holds the body back until the server
 * asks for it. Node's fetch (undici) refuses that header, and without it a server that refuses an upload from
 * its headers (404 unknown app, 409 registered version, 413 too large) closes a connection that still has
 * body bytes in flight: the kernel then resets it and the client never reads why. When the server answers
 * before (or while) the body goes out, sending stops and that answer is what the caller gets.
 */
export const expectContinueFetch: FetchLike = (input, init) =>
  new Promise<Response>((resolve, reject) => {
    const url = new URL(input);
    const method = (init.method ?? "GET").toUpperCase();
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => {
      headers[name] = value;
    });
    const body = init.body as unknown as AsyncIterable<Uint8Array> | string | Uint8Array | null | undefined;
    if (body) headers.expect = "100-continue";
    const request = (url.protocol === "https:" ? httpsRequest : httpRequest)(url, { method, headers });

    let answered = false;
    let sending = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = () => {
      if (timer) clearTimeout(timer);
      timer = undefined;
    };
    const signal = init.signal ?? undefined;
    const onAbort = () =>
      request.destroy(signal?.reason instanceof Error ? signal.reason : new Error("aborted"));
    signal?.addEventListener("abort", onAbort, { once: true });

    const send = async () => {
      if (sending || answered) return;
      sending = true;
      finish();
      try {
        if (typeof body === "string" || body instanceof Uint8Array) {
          request.end(body);
          return;
        }
        for await (const chunk of body as AsyncIterable<Uint8Array>) {
          // The server answered (a refusal while the body was going out): the rest is not wanted.
          if (answered || request.destroyed) return;
          if (!request.write(chunk)) {
            await new Promise<void>((go) => {
              const done = () => {
                request.off("drain", done);
                request.off("close", done);
                go();
              };
              request.once("drain", done);
              request.once("close", done);
            });
          }
        }
        if (!answered && !request.destroyed) request.end();
      } catch (error) {
        request.destroy(error instanceof Error ? error : new Error(String(error)));
      }
    };

    request.on("continue", () => void send());
    request.on("response", (message) => {
      answered = true;
      finish();
      signal?.removeEventListener("abort", onAbort);
      // A refusal before the body was sent leaves the request half-written: the connection cannot be reused.
      if (!sending || !request.writableFinished) message.on("end", () => request.destroy());
      resolve(toResponse(message, method));
    });
    request.on("error", (error) => {
      finish();
      signal?.removeEventListener("abort", onAbort);
      // Writing after an early answer may fail (EPIPE, ECONNRESET); the answer is what counts then.
      if (!answered) reject(new TypeError("fetch failed", { cause: error }));
    });
    if (body) {
      request.flushHeaders();
      timer = setTimeout(() => void send(), continueTimeoutMs);
    } else {
      request.end();
    }
  });
