// The relay's hops with none of Testbay's work in them, a floor measured in the same run by `npm run bench --
// appium`: Node's HTTP server takes a client's command and sends it down a WebSocket to bare-relay-back.ts (in
// the agent's place), then answers the client with what comes back. JSON frames shaped as the channel's
// (docs/appium-relay.md, "The channel"); no routes, hooks, sessions or IDs beyond a counter.
import http from "node:http";
import { type WebSocket, WebSocketServer } from "ws";
import { portOf, serveForBenchmark } from "./lifecycle.ts";

export interface BareRelayFrontReady {
  port: number;
}

interface Answer {
  id: string;
  status: number;
  body: unknown;
}

serveForBenchmark<BareRelayFrontReady>(async () => {
  let back: WebSocket | undefined;
  let nextId = 0;
  const waiting = new Map<string, (answer: Answer) => void>();
  const server = http.createServer((request, response) => {
    request.resume();
    request.on("end", () => {
      if (!back) {
        response.writeHead(503).end();
        return;
      }
      const id = String(nextId++);
      waiting.set(id, (answer) => {
        response.writeHead(answer.status, { "content-type": "application/json; charset=utf-8" });
        response.end(JSON.stringify(answer.body));
      });
      back.send(JSON.stringify({ type: "command", id, method: request.method, path: request.url }));
    });
  });
  const sockets = new WebSocketServer({ server });
  sockets.on("connection", (socket) => {
    back = socket;
    socket.on("message", (data) => {
      const answer = JSON.parse(String(data)) as Answer;
      waiting.get(answer.id)?.(answer);
      waiting.delete(answer.id);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    ready: { port: portOf(server.address()) },
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets.clients) socket.terminate();
        sockets.close();
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
});
