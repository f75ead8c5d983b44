import { EventEmitter } from "node:events";
import { WebSocket } from "ws";
import { pause } from "../runtime/pause.ts";
import {
  type ChannelAnswer,
  type ChannelCommand,
  type CommandFrame,
  readCommandFrame,
  unknownErrorAnswer,
} from "./channel-messages.ts";
import { type BackoffTimes, defaultBackoffTimes, reconnectDelayMs } from "./reconnect-backoff.ts";

/** How often the agent pings, and how long a silent server is given (docs/appium-relay.md, "The channel"). */
export interface ChannelLiveness {
  pingIntervalMs: number;
  silenceLimitMs: number;
}

export interface ChannelClientOptions {
  /** `{base_url}`, e.g. `http://127.0.0.1:8080/v1`: the channel is `<base>/agent/channel`. */
  baseUrl: string;
  /** The agent_id this agent claims with: the server relays its sessions' commands down this channel. */
  agentId: string;
  /** The agent's tokens: the SDK's cache (`client.tokens` of @testbay/client's Testbay). */
  tokens: { get(): Promise<string>; discard(token: string): void };
  /** Relays one command to Appium and gives its answer; one session's commands come one at a time, in order. */
  handle(command: ChannelCommand): Promise<ChannelAnswer>;
  log?: (message: string) => void;
  /** The server refused this client for good (403: not an agent client); the channel has stopped. */
  onRefused?: (status: number) => void;
  liveness?: ChannelLiveness;
  backoff?: BackoffTimes;
  random?: () => number;
}

/** Answers kept for commands the server sends again after a reconnect (it does for those it had no answer to). */
const rememberedAnswers = 1000;

/** A command's answer may be a screenshot or page source of several MiB; the server accepts frames this big. */
const maxFrameBytes = 128 * 1024 * 1024;

/**
 * The agent's end of the relay (API.md §12, "The relay"; docs/appium-relay.md, "The channel"): one WebSocket to
 * `GET /v1/agent/channel` with the agent's token, kept open (pings every 15 s, closed after 45 s of silence,
 * reconnected with backoff from 0.5 s to 5 s), down which the server sends WebDriver commands. Each goes to the
 * handler, one session's commands one after another in the order they came, and its answer goes back. A command
 * the server sends again after a reconnect (same ID) is answered from what was kept, so Appium sees it once.
 *
 * Events: `open` and `close` (for logs and tests).
 */
export class ChannelClient extends EventEmitter<{ open: []; close: [code: number] }> {
  private socket: WebSocket | undefined;
  private stopped = false;
  private readonly stopWaiting = new AbortController();
  private loop: Promise<void> | undefined;
  /** Each session's last command: the next one starts when it is answered. */
  private readonly sessionTurns = new Map<string, Promise<unknown>>();
  /** Answers by command ID, oldest first (Map keeps insertion order). */
  private readonly answers = new Map<string, Promise<ChannelAnswer>>();
  /** `ended` frames said while the channel was down: sent when it is up again. */
  private readonly unsent: string[] = [];
  private readonly log: (message: string) => void;

  constructor(private readonly options: ChannelClientOptions) {
    super();
    this.log = options.log ?? (() => {});
  }

  /** Whether the channel is open now. */
  get isOpen(): boolean {
    return this.socket?.readyState === WebSocket.OPEN;
  }

  /** Connects, and keeps connecting until stop(). */
  start(): void {
    this.loop ??= this.connectLoop();
  }

  /** Tells the server that this agent ended a session on its own (idle timeout, maximum duration…). */
  ended(session: string, reason: string): void {
    const frame = JSON.stringify({ type: "ended", session, reason });
    if (this.isOpen) this.socket?.send(frame);
    else this.unsent.push(frame);
  }

  /** Closes the channel and stops reconnecting; commands being handled are not waited for. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.stopWaiting.abort();
    this.socket?.close(1000, "agent stopping");
    await this.loop;
  }

  private async connectLoop(): Promise<void> {
    let attempt = 0;
    while (!this.stopped) {
      let opened = false;
      let token: string | undefined;
      try {
        token = await this.options.tokens.get();
        if (this.stopped) return;
        const outcome = await this.connectOnce(token);
        opened = outcome.opened;
        if (outcome.status === 401) this.options.tokens.discard(token);
        if (outcome.status === 403) {
          this.log("The server refuses this client's channel (403): it is not an agent client.");
          this.stopped = true;
          this.options.onRefused?.(403);
          return;
        }
        if (outcome.replaced) {
          this.log(`Another connection of agent ${this.options.agentId} replaced this one's channel.`);
        }
      } catch (error) {
        this.log(`Channel: ${error instanceof Error ? error.message : String(error)}`);
      }
      if (this.stopped) return;
      if (opened) attempt = 0;
      await pause(
        reconnectDelayMs(attempt++, this.options.random, this.options.backoff ?? defaultBackoffTimes),
        this.stopWaiting.signal,
      );
    }
  }

  /** One connection, from the upgrade to the close. */
  private connectOnce(token: string): Promise<{ opened: boolean; status?: number; replaced: boolean }> {
    const url = new URL(`${this.options.baseUrl.replace(/\/+$/, "")}/agent/channel`);
    url.protocol = url.protocol === "https:" ? "wss:" : "ws:";
    url.searchParams.set("agent_id", this.options.agentId);
    const socket = new WebSocket(url, { headers: { "x-api-key": token }, maxPayload: maxFrameBytes });
    this.socket = socket;
    const liveness = this.options.liveness ?? { pingIntervalMs: 15_000, silenceLimitMs: 45_000 };
    return new Promise((resolve) => {
      let opened = false;
      let status: number | undefined;
      let heardAt = Date.now();
      let timer: NodeJS.Timeout | undefined;
      const heard = () => {
        heardAt = Date.now();
      };
      socket.on("open", () => {
        opened = true;
        heard();
        timer = setInterval(() => {
          if (Date.now() - heardAt >= liveness.silenceLimitMs) socket.terminate();
          else socket.ping();
        }, liveness.pingIntervalMs);
        for (const frame of this.unsent.splice(0)) socket.send(frame);
        this.emit("open");
      });
      socket.on("ping", heard);
      socket.on("pong", heard);
      socket.on("message", (data, isBinary) => {
        heard();
        if (!isBinary) this.received(String(data));
      });
      socket.on("error", (error) => {
        // The upgrade's refusal: ws says only "Unexpected server response: <status>".
        const refused = /Unexpected server response: (\d{3})/.exec(error.message);
        if (refused?.[1]) status = Number(refused[1]);
        this.log(`Channel: ${error.message}`);
      });
      socket.on("close", (code) => {
        clearInterval(timer);
        if (this.socket === socket) this.socket = undefined;
        if (opened) this.emit("close", code);
        resolve({ opened, replaced: code === 4000, ...(status === undefined ? {} : { status }) });
      });
    });
  }

  private received(text: string): void {
    const frame = readCommandFrame(text);
    if (!frame) {
      this.log("Channel: a frame that is no command was ignored.");
      return;
    }
    let answer = this.answers.get(frame.id);
    if (!answer) {
      answer = this.inTurn(frame);
      this.answers.set(frame.id, answer);
      if (this.answers.size > rememberedAnswers) {
        const oldest = this.answers.keys().next().value;
        if (oldest !== undefined) this.answers.delete(oldest);
      }
    }
    void answer.then((value) => {
      // On the channel open now; if none is, the server sends the command again once one is, and gets this answer.
      if (this.isOpen) {
        this.socket?.send(
          JSON.stringify({ type: "answer", id: frame.id, status: value.status, body: value.body }),
        );
      }
    });
  }

  /** Handles a command after the session's previous one; never rejects. */
  private inTurn(frame: CommandFrame): Promise<ChannelAnswer> {
    const { type: _type, id: _id, ...command } = frame;
    const previous = this.sessionTurns.get(frame.session) ?? Promise.resolve();
    const answer = previous.then(() =>
      this.options
        .handle(command)
        .catch((error: unknown) =>
          unknownErrorAnswer(
            `The agent could not relay the command: ${error instanceof Error ? error.message : String(error)}`,
          ),
        ),
    );
    this.sessionTurns.set(frame.session, answer);
    void answer.then(() => {
      if (this.sessionTurns.get(frame.session) === answer) this.sessionTurns.delete(frame.session);
    });
    return answer;
  }
}
