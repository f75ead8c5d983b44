export { ChannelClient, type ChannelClientOptions, type ChannelLiveness } from "./channel-client.ts";
export type { ChannelAnswer, ChannelCommand } from "./channel-messages.ts";
export { type BackoffTimes, defaultBackoffTimes, reconnectDelayMs } from "./reconnect-backoff.ts";
