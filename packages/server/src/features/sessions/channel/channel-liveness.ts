/** How often each end pings, and how long a silent peer is given (docs/appium-relay.md, "The channel"). */
export interface LivenessTimes {
  pingIntervalMs: number;
  silenceLimitMs: number;
}

export const defaultLivenessTimes: LivenessTimes = { pingIntervalMs: 15_000, silenceLimitMs: 45_000 };

/** The part of a `ws` WebSocket that liveness needs; both ends use `ws`. */
export interface PingableSocket {
  ping(): void;
  terminate(): void;
  on(event: "pong" | "ping" | "message", listener: () => void): unknown;
}

/**
 * Pings the peer every `pingIntervalMs` and terminates the socket once nothing (a message, a ping, a pong) was
 * heard for `silenceLimitMs`: a peer gone without a close (a host asleep, a cable pulled, a NAT that forgot the
 * connection) is found out instead of holding commands for ever. Returns the stop function.
 */
export function keepAlive(socket: PingableSocket, times: LivenessTimes): () => void {
  let heardAt = Date.now();
  const heard = () => {
    heardAt = Date.now();
  };
  socket.on("pong", heard);
  socket.on("ping", heard);
  socket.on("message", heard);
  const timer = setInterval(() => {
    if (Date.now() - heardAt >= times.silenceLimitMs) {
      socket.terminate();
      return;
    }
    socket.ping();
  }, times.pingIntervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
