import type { QueryClient } from "@tanstack/react-query";

/**
 * The dashboard's live updates: one server-sent event stream (GET /v1/events) per open tab. Each event names an
 * execution that changed; the queries showing it are read again. While the stream is down (a proxy that buffers
 * it, a restart, a lost network) pages fall back to asking every few seconds, and the stream is opened again.
 */
export type LiveState = "connecting" | "live" | "polling";

let state: LiveState = "connecting";
const watchers = new Set<() => void>();

function setState(next: LiveState): void {
  if (next === state) return;
  state = next;
  for (const watcher of watchers) watcher();
}

/** For useSyncExternalStore: the stream's state now, and a way to hear when it changes. */
export const liveState = {
  current: (): LiveState => state,
  watch(watcher: () => void): () => void {
    watchers.add(watcher);
    return () => watchers.delete(watcher);
  },
};

/** How often a page showing something that can still change asks again while the stream is down. */
export const fallbackPollMs = 2_000;

/** A query's refetchInterval while what it shows can change: none while events arrive, polling otherwise. */
export const pollUnlessLive = (): number | false => (state === "live" ? false : fallbackPollMs);

const reconnectMs = 10_000;
const minReadIntervalMs = 1_000;

/**
 * Opens the stream and keeps it open until the returned function is called. EventSource reconnects on its own
 * after a dropped connection; a refused one (401 once the session ended, a proxy's 502) it gives up on, so this
 * opens a new one after a while.
 */
export function connectLiveUpdates(queries: QueryClient): () => void {
  let source: EventSource | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;

  // A running execution changes several times a second; its page (5,000 tests are five calls) is read at most
  // once a second, and once more after the last change. Reading again restarts a read under way, so without
  // this a busy run's page could be restarted faster than it loads.
  const resting = new Map<string, ReturnType<typeof setTimeout>>();
  const changedWhileResting = new Set<string>();
  const readAgain = (executionId: string | null) => {
    const key = executionId ?? "*";
    if (resting.has(key)) {
      changedWhileResting.add(key);
      return;
    }
    void queries.invalidateQueries({ queryKey: ["executions"] });
    void queries.invalidateQueries({
      queryKey: executionId === null ? ["execution"] : ["execution", executionId],
    });
    resting.set(
      key,
      setTimeout(() => {
        resting.delete(key);
        if (changedWhileResting.delete(key)) readAgain(executionId);
      }, minReadIntervalMs),
    );
  };

  const open = () => {
    source = new EventSource("/v1/events");
    source.addEventListener("ready", () => {
      setState("live");
      // Whatever changed while the stream was down (or before it first opened) is read now.
      readAgain(null);
    });
    source.addEventListener("execution", (event) => {
      const { execution_id } = JSON.parse((event as MessageEvent<string>).data) as {
        execution_id: string | null;
      };
      readAgain(execution_id);
    });
    source.addEventListener("error", () => {
      if (state === "live") {
        setState("polling");
        // Pages start polling again only once their queries run: run them now.
        readAgain(null);
      } else {
        setState("polling");
      }
      if (source?.readyState === EventSource.CLOSED && !stopped) {
        retry = setTimeout(open, reconnectMs);
      }
    });
  };

  open();
  return () => {
    stopped = true;
    clearTimeout(retry);
    for (const timer of resting.values()) clearTimeout(timer);
    source?.close();
    setState("connecting");
  };
}
