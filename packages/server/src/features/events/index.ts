export { append, eventsOf } from "./events.repo.ts";
export type { EventType, NewEvent, StoredEvent } from "./types.ts";
