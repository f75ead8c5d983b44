// Shared by the channel's integration suites: a test server (one instance, or two on the scaled project) with the
// relay registered on each instance as app.ts will register it, an in-memory session directory, and agents'
// ends: the real ChannelClient of packages/agent, or a bare WebSocket that speaks the frames by hand.
import { randomBytes } from "node:crypto";
import WebSocket from "ws";
import { startTestServer, type TestServer } from "../../../../test/harness.ts";
import { ManualClock } from "../../../clock.ts";
import type { LivenessTimes } from "./channel-liveness.ts";
import type { AgentAddress } from "./channel-messages.ts";
import type { ChannelRegistry } from "./channel-registry.ts";
import type { SessionDirectory, SessionWhereabouts } from "./session-directory.ts";
import type { WebDriverCaller } from "./webdriver-caller.ts";

/** Values pushed by one side, awaited one by one by the test: bounded waits on events, no sleeps. */
export class AsyncQueue<T> {
  private readonly items: T[] = [];
  private readonly waiting: Array<(item: T) => void> = [];

  push(item: T): void {
    const wake = this.waiting.shift();
    if (wake) wake(item);
    else this.items.push(item);
  }

  /** The next item; rejects after `timeoutMs` (a failure message, never a pass). */
  next(timeoutMs = 10_000): Promise<T> {
    const item = this.items.shift();
    if (item !== undefined) return Promise.resolve(item);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.splice(this.waiting.indexOf(wake) >>> 0, 1);
        reject(new Error(`nothing came within ${timeoutMs} ms`));
      }, timeoutMs);
      const wake = (value: T) => {
        clearTimeout(timer);
        resolve(value);
      };
      this.waiting.push(wake);
    });
  }

  get size(): number {
    return this.items.length;
  }
}

/** The sessions of the test, by ID; and what callers the directory was asked with. */
export class MapSessionDirectory implements SessionDirectory {
  readonly sessions = new Map<string, SessionWhereabouts>();
  readonly callers: WebDriverCaller[] = [];

  async find(sessionId: string, caller: WebDriverCaller): Promise<SessionWhereabouts | undefined> {
    this.callers.push(caller);
    return this.sessions.get(sessionId);
  }

  forget(): void {}
}

export interface ChannelTestServer {
  server: TestServer;
  /** The channels held by each instance, in the order of server.instances. */
  channels: ChannelRegistry[];
  directory: MapSessionDirectory;
  /** Agents whose channel stayed gone for the grace period (onChannelLost), from any instance. */
  lost: AsyncQueue<AgentAddress>;
  /** `ended` frames, from any instance. */
  ended: AsyncQueue<{ agent: AgentAddress; session: string; reason: string }>;
  organizationId: string;
  agentToken: string;
  ciToken: string;
  ciClientId: string;
}

export async function startChannelServer(
  options: { graceMs?: number; liveness?: LivenessTimes } = {},
): Promise<ChannelTestServer> {
  const directory = new MapSessionDirectory();
  const lost = new AsyncQueue<AgentAddress>();
  const ended = new AsyncQueue<{ agent: AgentAddress; session: string; reason: string }>();
  // Both instances of one test server share it; other suites on the same Redis use their own.
  const holderKeyPrefix = `testbay-test:channel:${randomBytes(6).toString("hex")}:`;
  // The server's clock, which issues the tokens whose expiry closes a channel.
  const clock = new ManualClock();
  // The relay as app.ts builds it on each instance, with the test's own directory, hooks and times.
  const server = await startTestServer({
    clock,
    channel: {
      sessions: directory,
      onChannelLost: (agent) => lost.push(agent),
      onSessionEnded: (agent, session, reason) => ended.push({ agent, session, reason }),
      holderKeyPrefix,
      // A stand-in for setSessionStatus: answered by the server, never relayed.
      answerHere: async (command) =>
        command.path === "/execute/sync" &&
        typeof command.body === "object" &&
        command.body !== null &&
        String((command.body as { script?: unknown }).script).startsWith("testbay:")
          ? { status: 200, body: { value: null } }
          : undefined,
      ...(options.graceMs === undefined ? {} : { graceMs: options.graceMs }),
      ...(options.liveness ? { liveness: options.liveness } : {}),
    },
  });
  const channels = (server.instances.length > 0 ? server.instances : [server]).map(
    (instance) => instance.app.services.channels,
  );
  const agentCredentials = await server.createClient("acme", "agent");
  const ci = await server.createClient("acme", "ci");
  const ciToken = await server.token(ci);
  const me = await fetch(`${server.baseUrl}/me`, { headers: { "x-api-key": ciToken } });
  const { organization } = (await me.json()) as { organization: { id: string } };
  return {
    server,
    channels,
    directory,
    lost,
    ended,
    organizationId: organization.id,
    agentToken: await server.token(agentCredentials),
    ciToken,
    ciClientId: ci.client_id,
  };
}

/** An agent's end spoken by hand: each frame it gets, and its close code. */
export interface BareAgent {
  socket: WebSocket;
  frames: AsyncQueue<Record<string, unknown>>;
  closed: Promise<number>;
}

/** Opens `GET /v1/agent/channel` with a bare WebSocket; resolves once open (rejects with the refusal). */
export function connectBareAgent(
  baseUrl: string,
  token: string,
  agentId: string,
  options: { answerPings?: boolean } = {},
): Promise<BareAgent> {
  const url = `${baseUrl.replace(/^http/, "ws")}/agent/channel?agent_id=${encodeURIComponent(agentId)}`;
  const socket = new WebSocket(url, {
    headers: { "x-api-key": token },
    autoPong: options.answerPings ?? true,
  });
  const frames = new AsyncQueue<Record<string, unknown>>();
  const closed = new Promise<number>((resolve) => socket.on("close", (code) => resolve(code)));
  socket.on("message", (data) => frames.push(JSON.parse(String(data)) as Record<string, unknown>));
  return new Promise((resolve, reject) => {
    socket.once("open", () => resolve({ socket, frames, closed }));
    socket.once("error", reject);
  });
}

/** The refusal of an upgrade: its status, content type and body. */
export function refusedUpgrade(
  baseUrl: string,
  headers: Record<string, string>,
): Promise<{ status: number; contentType: string | undefined; body: Record<string, unknown> }> {
  const url = `${baseUrl.replace(/^http/, "ws")}/agent/channel?agent_id=refused`;
  const socket = new WebSocket(url, { headers });
  return new Promise((resolve, reject) => {
    socket.once("open", () => reject(new Error("the channel was opened")));
    socket.once("unexpected-response", (request, response) => {
      let text = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        text += chunk;
      });
      response.on("end", () => {
        request.destroy();
        resolve({
          status: response.statusCode ?? 0,
          contentType: response.headers["content-type"],
          body: JSON.parse(text) as Record<string, unknown>,
        });
      });
    });
    socket.once("error", reject);
  });
}

/** A WebDriver command over HTTP, as a client sends it; the status, content type and parsed body. */
export async function webDriver(
  origin: string,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<{ status: number; contentType: string | null; body: unknown }> {
  const response = await fetch(`${origin}/wd/hub${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json; charset=utf-8" }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: typeof body === "string" ? body : JSON.stringify(body) }),
  });
  return {
    status: response.status,
    contentType: response.headers.get("content-type"),
    body: JSON.parse(await response.text()) as unknown,
  };
}
