import net from "node:net";

export interface RoundRobinProxy {
  /** `127.0.0.1:PORT`-based origin, e.g. `http://127.0.0.1:40123`. */
  origin: string;
  /** How many connections each target got, in target order. */
  connections: number[];
  close(): Promise<void>;
}

/**
 * A load balancer for tests: hands each new TCP connection to the next of `targets` in turn, as an L4
 * balancer would. Working on connections, not requests, it leaves every HTTP detail alone (Expect:
 * 100-continue, early answers, closes mid-body), so the integration suite behaves as it does against one
 * instance while its requests are spread over several. A target that refuses the connection (an instance
 * restarting) is passed over for the next, as a balancer's health check takes it out of rotation: what a
 * rolling restart relies on (rolling-restart.scaled.test.ts).
 */
export async function startRoundRobinProxy(
  targets: readonly { host: string; port: number }[],
): Promise<RoundRobinProxy> {
  const connections = targets.map(() => 0);
  const open = new Set<net.Socket>();
  let next = 0;
  const track = (socket: net.Socket) => {
    open.add(socket);
    socket.on("close", () => open.delete(socket));
  };
  const server = net.createServer((client) => {
    track(client);
    // Nothing is read from the client until an upstream took the connection: its first bytes go there whole.
    client.pause();
    client.on("error", () => undefined);
    const connect = (tries: number) => {
      const index = next++ % targets.length;
      const target = targets[index];
      if (!target || tries >= targets.length) return client.destroy();
      const upstream = net.connect(target.port, target.host);
      track(upstream);
      const refused = () => connect(tries + 1);
      upstream.once("error", refused);
      upstream.once("connect", () => {
        upstream.off("error", refused);
        connections[index] = (connections[index] ?? 0) + 1;
        // Either side ending or failing ends the other, as a balancer would; half-closes pass through.
        client.on("error", () => upstream.destroy());
        upstream.on("error", () => client.destroy());
        client.pipe(upstream);
        upstream.pipe(client);
        client.resume();
      });
    };
    connect(0);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (typeof address !== "object" || !address) throw new Error("proxy has no address");
  return {
    origin: `http://127.0.0.1:${address.port}`,
    connections,
    async close() {
      for (const socket of open) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
