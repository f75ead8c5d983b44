// The agent's place in the bare relay (bare-relay-front.ts): takes each command off the WebSocket, asks the Appium
// at BARE_RELAY_APPIUM for it in the Appium session BARE_RELAY_SESSION over a kept-alive connection (undici, as
// packages/agent/src/appium/appium-http.ts does), and sends the parsed answer back up.
import { once } from "node:events";
import { Agent, type Dispatcher } from "undici";
import { WebSocket } from "ws";
import { serveForBenchmark } from "./lifecycle.ts";

function required(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is not set`);
  return value;
}

serveForBenchmark<{ connected: true }>(async () => {
  const front = required("BARE_RELAY_FRONT");
  const appium = required("BARE_RELAY_APPIUM");
  const session = required("BARE_RELAY_SESSION");
  const connections = new Agent({ headersTimeout: 0, bodyTimeout: 0 });
  const socket = new WebSocket(front);
  socket.on("message", async (data) => {
    const command = JSON.parse(String(data)) as { id: string; method: string; path: string };
    const response = await connections.request({
      origin: appium,
      path: `/session/${session}${command.path}`,
      method: command.method as Dispatcher.HttpMethod,
    });
    const text = await response.body.text();
    socket.send(
      JSON.stringify({ type: "answer", id: command.id, status: response.statusCode, body: JSON.parse(text) }),
    );
  });
  await once(socket, "open");
  return {
    ready: { connected: true },
    close: async () => {
      socket.close();
      await connections.close();
    },
  };
});
