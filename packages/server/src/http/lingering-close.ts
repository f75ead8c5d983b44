import type { IncomingMessage, ServerResponse } from "node:http";
import type { Socket } from "node:net";

/** How long a refused request's connection may be kept after its answer, whatever the client does. */
export const LINGER_MAX_MS = 2_000;
/** How much of the refused body is read (and discarded) in all, before the answer and after, at most. */
export const LINGER_MAX_BYTES = 1024 * 1024;
/** With nothing arriving for this long the client has stopped sending: the socket can close cleanly. */
export const LINGER_IDLE_MS = 500;
/**
 * A socket read returns up to this much. Reading stops two reads short of the byte bound: one may be under
 * way when the socket is paused, and the paused socket may still hold one it took from the kernel.
 */
const READ_CHUNK_BYTES = 64 * 1024;

export interface LingerLimits {
  maxMs: number;
  maxBytes: number;
  idleMs: number;
}

export interface LingerOutcome {
  /** Body bytes Node had read and buffered before the answer was out (dropped too). */
  readBeforeAnswer: number;
  /** Bytes read and dropped after the answer. */
  discardedBytes: number;
  /**
   * Why the socket was closed: the client closed its side, nothing arrived for `idleMs`, `maxMs` passed
   * (`byteBoundHit` says whether reading had stopped at `maxBytes` by then), or a socket error.
   */
  reason: "client-closed" | "idle" | "time" | "error";
  byteBoundHit: boolean;
}

interface ReadingHandle {
  reading?: boolean;
  readStart?: () => number;
}

const defaults: LingerLimits = { maxMs: LINGER_MAX_MS, maxBytes: LINGER_MAX_BYTES, idleMs: LINGER_IDLE_MS };

/** The parts of Node's HTTP parser binding used to take a socket back from it (as Node does for upgrades). */
interface ConsumingParser {
  _consumed?: boolean;
  unconsume?: () => void;
}

/**
 * For a request answered before its body was read, to be called before the answer is sent (the caller sets
 * `Connection: close`): once the answer is out, the server half-closes, then reads and discards what the
 * client still sends for at most `maxMs` and `maxBytes` before closing.
 *
 * Closing a socket with unread bytes in its receive buffer makes the kernel send RST instead of FIN, and a
 * client still sending its body then fails its next write before it reads the answer it was sent (a 409 seen
 * as ECONNRESET). Draining the whole body instead (Node's default on keep-alive) would read up to the upload
 * limit for nothing. nginx's lingering close is the middle way followed here.
 *
 * Node closes a `Connection: close` response's socket with `destroySoon()` when the response finishes, so
 * that call is where lingering starts. The socket is then taken from the HTTP parser: nothing more reaches
 * it, so the body bytes are dropped unparsed and a request pipelined after the body is never served. Once
 * `maxBytes` have been read the socket stops reading (the kernel's window closes and the client's writes
 * block, which gives a client that reads while it writes the time to see the answer) until `maxMs`, when it
 * is destroyed; a slow trickle is cut at `maxMs` too. Nothing is buffered: each chunk is dropped as read.
 *
 * If this Node's parser cannot be detached, the socket is destroyed once the answer is out, as before.
 */
export function lingerAfterAnswer(
  request: IncomingMessage,
  response: ServerResponse,
  options: { limits?: Partial<LingerLimits>; onClosed?: (outcome: LingerOutcome) => void } = {},
): void {
  const socket = request.socket as Socket | null;
  if (!socket) return;
  const limits = { ...defaults, ...options.limits };
  let started = false;
  const linger = () => {
    if (started) return;
    started = true;
    if (socket.destroyed) return;
    // Node has not let the request stream flow yet (it does right after this call), so what it holds is the
    // part of the body read before the answer.
    const readBeforeAnswer = request.readableLength;
    if (!detachFromParser(socket)) {
      socket.destroy();
      return;
    }
    discardUntilBound(socket, limits, readBeforeAnswer, options.onClosed);
  };
  // Node calls destroySoon() on a finished Connection: close response; end() is its fallback.
  (socket as Socket & { destroySoon?: () => void }).destroySoon = linger;
  // A response that is not Connection: close after all (a header removed later) must still not leave the
  // connection to keep-alive with a body half read.
  response.once("finish", () => setImmediate(linger));
}

/** Takes the socket's incoming bytes away from Node's HTTP parser; false when this Node does not allow it. */
function detachFromParser(socket: Socket): boolean {
  const parser = (socket as Socket & { parser?: ConsumingParser | null }).parser;
  if (parser?._consumed) {
    // The parser reads the socket's handle directly (plain TCP): hand the handle back to the socket.
    if (typeof parser.unconsume !== "function") return false;
    parser.unconsume();
    parser._consumed = false;
  }
  // Otherwise (TLS, or once unconsumed) the parser is fed by 'data' listeners, and Node's 'end' listener
  // would make it report the unfinished body as a client error.
  socket.removeAllListeners("data");
  socket.removeAllListeners("end");
  // Our own deadline bounds the connection; the server's timeouts (body idle, keep-alive) no longer apply.
  socket.setTimeout(0);
  socket.removeAllListeners("timeout");
  return true;
}

function discardUntilBound(
  socket: Socket,
  limits: LingerLimits,
  readBeforeAnswer: number,
  onClosed: ((outcome: LingerOutcome) => void) | undefined,
): void {
  let discardedBytes = 0;
  let byteBoundHit = false;
  let done = false;
  const close = (reason: LingerOutcome["reason"]) => {
    if (done) return;
    done = true;
    clearTimeout(deadline);
    clearTimeout(idle);
    socket.destroy();
    onClosed?.({ readBeforeAnswer, discardedBytes, reason, byteBoundHit });
  };
  const deadline = setTimeout(() => close("time"), limits.maxMs);
  const idle = setTimeout(() => close("idle"), limits.idleMs);
  socket.on("data", (chunk: Buffer) => {
    discardedBytes += chunk.length;
    if (byteBoundHit) return;
    if (readBeforeAnswer + discardedBytes + 2 * READ_CHUNK_BYTES > limits.maxBytes) {
      byteBoundHit = true;
      socket.pause();
      // Not idle: the client may still be sending into a full window. Only the deadline ends it now.
      clearTimeout(idle);
      return;
    }
    idle.refresh();
  });
  socket.on("end", () => close("client-closed"));
  socket.on("error", () => close("error"));
  socket.once("close", () => close("client-closed"));
  socket.end();
  socket.resume();
  // The socket's stream state still records the read it asked for before the parser took its handle, so
  // resume() alone does not restart reading; this is what Node's own 'resume' listener does for that handle.
  const handle = (socket as Socket & { _handle?: ReadingHandle | null })._handle;
  if (handle && !handle.reading && typeof handle.readStart === "function") {
    handle.reading = true;
    handle.readStart();
  }
}
