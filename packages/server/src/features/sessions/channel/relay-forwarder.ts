import { Agent, request } from "undici";
import { w3cErrorAnswer } from "../w3c-errors.ts";
import type { AgentAddress, RelayedAnswer, RelayedCommand } from "./channel-messages.ts";
import { type RelaySignature, relaySignatureHeader } from "./relay-signature.ts";

/** The internal route a holder serves forwarded commands at (relay-internal.routes.ts). */
export const internalRelayPath = "/v1/internal/relay";

/**
 * What one instance sends another, signed (relay-signature.ts): a command for the agent (with its ID when it
 * waited on the sender's channel before), or word that the agent's channel moved to the sender.
 */
export type ForwardedMessage =
  | { agent: AgentAddress; command: RelayedCommand; id?: string }
  | { agent: AgentAddress; moved: true };

/**
 * Sends a command to the instance holding its agent's channel, once, and returns the holder's answer. Kept-alive
 * connections (undici's pool per origin): a forwarded command adds one loopback or LAN round trip, not a
 * connection set-up (API.md §12: at most 2 ms added at the median when forwarded).
 */
export class RelayForwarder {
  /**
   * No header or body timeout (undici's default is 300 s each): a WebDriver command may take minutes (an implicit
   * wait, installing a large app), as it may on the agent (packages/agent/src/appium/appium-http.ts), and a
   * forward that timed out would be sent again after a fresh lookup, so Appium would run the command twice.
   */
  private readonly dispatcher = new Agent({
    keepAliveTimeout: 30_000,
    connections: 64,
    headersTimeout: 0,
    bodyTimeout: 0,
  });

  constructor(
    private readonly signature: RelaySignature,
    private readonly log: { warn(object: object, message: string): void },
  ) {}

  /**
   * The holder's answer; undefined when the holder could not be reached (it went away) or no longer holds the
   * channel (409): the caller looks for the holder again. An answer that is not the holder's relay (it refused the signature:
   * instances with different signing keys) is a W3C `unknown error`, since relaying here could not help.
   */
  async forward(
    url: string,
    agent: AgentAddress,
    command: RelayedCommand,
    id?: string,
  ): Promise<RelayedAnswer | undefined> {
    const message: ForwardedMessage = { agent, command, ...(id === undefined ? {} : { id }) };
    let response: Awaited<ReturnType<typeof request>>;
    try {
      response = await this.post(url, message);
    } catch (error) {
      this.log.warn(
        { err: error, holder: url },
        "forwarding a WebDriver command failed: relayed here instead",
      );
      return undefined;
    }
    const text = await response.body.text();
    // The channel moved on from there since the lookup: the caller looks again.
    if (response.statusCode === 409) return undefined;
    if (response.statusCode === 200) {
      try {
        return JSON.parse(text) as RelayedAnswer;
      } catch {
        // handled below
      }
    }
    this.log.warn(
      { holder: url, status: response.statusCode },
      "the instance holding the agent's channel refused a forwarded command (do all instances share TESTBAY_SIGNING_KEY or one database?)",
    );
    return w3cErrorAnswer(
      "unknown error",
      "Testbay could not relay the command to the agent's server instance.",
    );
  }

  /**
   * Tells the instance that held the agent's channel before that this one holds it now: it closes its own (if the
   * agent's old connection is still open there) and forwards the commands waiting on it here.
   */
  async notifyMoved(url: string, agent: AgentAddress): Promise<void> {
    try {
      const response = await this.post(url, { agent, moved: true });
      await response.body.dump();
    } catch (error) {
      // An instance that is gone has nothing waiting any more.
      this.log.warn({ err: error, holder: url }, "telling the previous holder of an agent's channel failed");
    }
  }

  private post(url: string, message: ForwardedMessage) {
    const body = JSON.stringify(message);
    return request(`${url}${internalRelayPath}`, {
      method: "POST",
      dispatcher: this.dispatcher,
      headers: { "content-type": "application/json", [relaySignatureHeader]: this.signature.sign(body) },
      body,
    });
  }

  close(): Promise<void> {
    return this.dispatcher.close();
  }
}
