import { randomBytes } from "node:crypto";
import type { WebSocket } from "ws";
import { w3cErrorAnswer } from "../w3c-errors.ts";
import { defaultLivenessTimes, keepAlive, type LivenessTimes } from "./channel-liveness.ts";
import {
  type AgentAddress,
  agentKey,
  type CommandFrame,
  type RelayedAnswer,
  type RelayedCommand,
  readAgentFrame,
} from "./channel-messages.ts";

/** WebSocket close code of a channel another one of the same agent replaced (docs/appium-relay.md). */
export const replacedCloseCode = 4000;

/**
 * WebSocket close code of a channel whose token expired: the agent reconnects with a fresh one and is
 * authenticated again (a disabled client or a rotated secret is refused then).
 */
export const tokenExpiredCloseCode = 4001;

/** How long a command waits for a channel that is gone to come back (API.md §12: then the session is lost). */
export const defaultGraceMs = 10_000;

export interface ChannelRegistryOptions {
  /** See defaultGraceMs; tests shorten it. */
  graceMs?: number;
  liveness?: LivenessTimes;
  /** An agent's channel opened on this instance (the holders registry records it). */
  onOpened?(agent: AgentAddress): void;
  /** An agent's channel closed on this instance and no other replaced it here. */
  onClosed?(agent: AgentAddress): void;
  /** An agent's channel stayed gone from this instance for `graceMs` (channel.feature.ts asks Redis whether it came back elsewhere). */
  onChannelLost?(agent: AgentAddress): void | Promise<void>;
  /** The agent ended a session on its own (idle timeout, maximum duration…). */
  onSessionEnded?(agent: AgentAddress, session: string, reason: string): void;
  log?: { warn(object: object, message: string): void; info(object: object, message: string): void };
}

interface Pending {
  frame: CommandFrame;
  answer(answer: RelayedAnswer): void;
  /** Runs while the command waits for its agent's channel: answers `invalid session id` when it fires. */
  timer: NodeJS.Timeout | undefined;
}

interface AgentState {
  address: AgentAddress;
  socket: WebSocket | undefined;
  stopLiveness: (() => void) | undefined;
  /** Commands sent or waiting to be, by id, in the order they came (Map keeps insertion order). */
  pending: Map<string, Pending>;
  lostTimer: NodeJS.Timeout | undefined;
  /** Resolved when a channel opens: for those waiting to know whether the agent came back. */
  opened: Array<() => void>;
}

/**
 * The agents' channels this instance holds (docs/appium-relay.md, "The channel"): at most one per agent, a new
 * one replacing the old (closed with 4000); commands relayed down them with per-channel IDs and answered when
 * the agent answers. A command for an agent whose channel is gone waits for it up to `graceMs`, and one sent on
 * a channel that closed before its answer is sent again, with the same ID, on the next one (the agent answers
 * an ID it saw before from what it kept, so a command reaches Appium once); after `graceMs` without a channel
 * they are answered `invalid session id` and `onChannelLost` says the agent's sessions are lost.
 */
export class ChannelRegistry {
  private readonly agents = new Map<string, AgentState>();
  /** IDs unique per channel and beyond: this instance's prefix and a counter. */
  private readonly idPrefix = `c${randomBytes(4).toString("hex")}`;
  private nextId = 0;
  private readonly graceMs: number;
  private readonly liveness: LivenessTimes;
  private closed = false;

  constructor(private readonly options: ChannelRegistryOptions = {}) {
    this.graceMs = options.graceMs ?? defaultGraceMs;
    this.liveness = options.liveness ?? defaultLivenessTimes;
  }

  /** Whether this instance holds the agent's channel now. */
  holds(agent: AgentAddress): boolean {
    return this.agents.get(agentKey(agent))?.socket !== undefined;
  }

  /**
   * Takes an agent's new channel: replaces the one it had, and sends it the commands that were waiting.
   * `tokenExpiresInMs`: the channel is closed (4001) when the token it was opened with expires.
   */
  accept(agent: AgentAddress, socket: WebSocket, tokenExpiresInMs?: number): void {
    if (this.closed) {
      socket.close(1001, "server closing");
      return;
    }
    const state = this.stateOf(agent);
    const previous = state.socket;
    state.stopLiveness?.();
    state.socket = socket;
    state.stopLiveness = keepAlive(socket, this.liveness);
    if (previous) previous.close(replacedCloseCode, "replaced");
    clearTimeout(state.lostTimer);
    state.lostTimer = undefined;
    socket.on("message", (data, isBinary) => {
      if (!isBinary) this.received(state, String(data));
    });
    const expiry =
      tokenExpiresInMs === undefined
        ? undefined
        : setTimeout(
            () => socket.close(tokenExpiredCloseCode, "token expired"),
            // setTimeout's longest wait is about 24.8 days; tokens live 24 h.
            Math.min(Math.max(0, tokenExpiresInMs), 2 ** 31 - 1),
          );
    expiry?.unref();
    socket.on("close", () => {
      clearTimeout(expiry);
      this.channelClosed(state, socket);
    });
    socket.on("error", (error) => this.options.log?.warn({ err: error, agent }, "agent channel error"));
    this.options.log?.info(
      { agent_id: agent.agentId },
      previous ? "agent channel replaced" : "agent channel opened",
    );
    this.options.onOpened?.(agent);
    for (const pending of state.pending.values()) {
      clearTimeout(pending.timer);
      pending.timer = undefined;
      socket.send(JSON.stringify(pending.frame));
    }
    for (const wake of state.opened.splice(0)) wake();
  }

  /**
   * Relays a command to the agent and resolves with its answer. Never rejects: a command that cannot be
   * relayed is answered with the W3C error the client should see. Without a channel it waits `waitMs` for one
   * (the grace period, less what the caller waited already).
   */
  send(
    agent: AgentAddress,
    command: RelayedCommand,
    { waitMs = this.graceMs, id = this.newId() }: { waitMs?: number; id?: string } = {},
  ): Promise<RelayedAnswer> {
    if (this.closed) return Promise.resolve(lostAnswer("the server is shutting down"));
    const state = this.stateOf(agent);
    const frame: CommandFrame = { type: "command", id, ...command };
    return new Promise<RelayedAnswer>((resolve) => {
      const pending: Pending = {
        frame,
        timer: undefined,
        answer: (answer) => {
          clearTimeout(pending.timer);
          if (state.pending.get(id) === pending) state.pending.delete(id);
          this.forgetIfIdle(state);
          resolve(answer);
        },
      };
      state.pending.set(id, pending);
      if (state.socket) state.socket.send(JSON.stringify(frame));
      else this.waitForChannel(pending, waitMs);
    });
  }

  /**
   * The agent's channel moved to another instance (it reconnected there): closes the one here, if still open,
   * with 4000 as a replacement here would, and hands over the commands that wait on it, for the caller to
   * forward with their IDs (so that the agent, which may have run one already, answers it from what it kept).
   */
  withdraw(
    agent: AgentAddress,
  ): Array<{ id: string; command: RelayedCommand; answer(answer: RelayedAnswer): void }> {
    const state = this.agents.get(agentKey(agent));
    if (!state) return [];
    const withdrawn = [...state.pending.values()].map((pending) => {
      clearTimeout(pending.timer);
      const { type: _type, id, ...command } = pending.frame;
      return { id, command, answer: pending.answer };
    });
    state.pending.clear();
    const socket = state.socket;
    if (socket) {
      // Not a loss: the close that follows must not start the wait for a channel that is elsewhere now.
      state.socket = undefined;
      state.stopLiveness?.();
      state.stopLiveness = undefined;
      socket.close(replacedCloseCode, "replaced");
    }
    clearTimeout(state.lostTimer);
    state.lostTimer = undefined;
    this.forgetIfIdle(state);
    return withdrawn;
  }

  /** Resolves when the agent's channel is open here, or with false after `timeoutMs`. */
  opened(agent: AgentAddress, timeoutMs: number): Promise<boolean> {
    if (this.holds(agent)) return Promise.resolve(true);
    const state = this.stateOf(agent);
    return new Promise((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        resolve(true);
      };
      const timer = setTimeout(() => {
        state.opened.splice(state.opened.indexOf(wake) >>> 0, 1);
        this.forgetIfIdle(state);
        resolve(false);
      }, timeoutMs);
      state.opened.push(wake);
    });
  }

  /**
   * Cuts an agent's channel, as a lost connection would (its commands wait for the next one): the agent
   * reconnects and is authenticated again, so a client disabled meanwhile is refused.
   */
  drop(agent: AgentAddress): void {
    this.agents.get(agentKey(agent))?.socket?.terminate();
  }

  /** Closes every channel and answers what waits: the server is closing. */
  close(): void {
    this.closed = true;
    for (const state of this.agents.values()) {
      clearTimeout(state.lostTimer);
      state.stopLiveness?.();
      for (const pending of [...state.pending.values()]) {
        pending.answer(lostAnswer("the server is shutting down"));
      }
      state.socket?.close(1001, "server closing");
      for (const wake of state.opened.splice(0)) wake();
    }
    this.agents.clear();
  }

  private newId(): string {
    return `${this.idPrefix}${(this.nextId++).toString(36)}`;
  }

  private stateOf(agent: AgentAddress): AgentState {
    const key = agentKey(agent);
    let state = this.agents.get(key);
    if (!state) {
      state = {
        address: agent,
        socket: undefined,
        stopLiveness: undefined,
        pending: new Map(),
        lostTimer: undefined,
        opened: [],
      };
      this.agents.set(key, state);
    }
    return state;
  }

  /** Drops the state of an agent with no channel, nothing pending and nobody waiting: the map stays bounded. */
  private forgetIfIdle(state: AgentState): void {
    if (
      !state.socket &&
      state.pending.size === 0 &&
      state.opened.length === 0 &&
      state.lostTimer === undefined
    ) {
      this.agents.delete(agentKey(state.address));
    }
  }

  private waitForChannel(pending: Pending, waitMs = this.graceMs): void {
    pending.timer = setTimeout(
      () =>
        pending.answer(
          lostAnswer(`the agent's channel has been gone for more than ${this.graceMs / 1000} s`),
        ),
      Math.max(0, waitMs),
    );
  }

  private received(state: AgentState, text: string): void {
    const frame = readAgentFrame(text);
    if (!frame) {
      this.options.log?.warn({ agent_id: state.address.agentId }, "agent channel: unreadable frame ignored");
      return;
    }
    if (frame.type === "answer") {
      // An answer to a command no longer waiting (answered already, or timed out): nothing to do.
      state.pending.get(frame.id)?.answer({ status: frame.status, body: frame.body });
      return;
    }
    this.options.onSessionEnded?.(state.address, frame.session, frame.reason);
  }

  private channelClosed(state: AgentState, socket: WebSocket): void {
    // A replaced channel's close says nothing about the agent: its successor is already in place.
    if (state.socket !== socket) return;
    state.socket = undefined;
    state.stopLiveness?.();
    state.stopLiveness = undefined;
    if (this.closed) return;
    this.options.log?.info({ agent_id: state.address.agentId }, "agent channel closed");
    this.options.onClosed?.(state.address);
    for (const pending of state.pending.values()) this.waitForChannel(pending);
    state.lostTimer = setTimeout(() => {
      state.lostTimer = undefined;
      this.forgetIfIdle(state);
      void this.options.onChannelLost?.(state.address);
    }, this.graceMs);
  }
}

function lostAnswer(why: string): RelayedAnswer {
  return w3cErrorAnswer("invalid session id", `The session is lost: ${why}.`);
}
