export { type ChannelDeps, createChannel } from "./channel.feature.ts";
export type { AgentAddress, RelayedAnswer, RelayedCommand } from "./channel-messages.ts";
export type { ChannelRegistry } from "./channel-registry.ts";
export type { Relay } from "./relay.ts";
export type { SessionDirectory, SessionWhereabouts } from "./session-directory.ts";
export type { WebDriverCaller } from "./webdriver-caller.ts";
export type { AnswerHere } from "./webdriver-command.routes.ts";
