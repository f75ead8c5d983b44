import { useSyncExternalStore } from "react";
import { liveState } from "../../api/live-updates.ts";

const labels = {
  connecting: { text: "Connecting…", title: "Opening the live updates", dot: "bg-slate-400" },
  live: { text: "Live", title: "Pages update as runs change", dot: "bg-emerald-500" },
  polling: {
    text: "Updating every 2 s",
    title: "The live updates are interrupted; pages ask again every 2 seconds until they are back",
    dot: "bg-amber-500",
  },
} as const;

/** Whether pages update by themselves right now, so a person knows whether to trust what is on screen. */
export function LiveIndicator() {
  const state = useSyncExternalStore(liveState.watch, liveState.current);
  const label = labels[state];
  return (
    <span role="status" title={label.title} className="flex items-center gap-1.5 text-xs text-muted">
      <span aria-hidden="true" className={`size-2 rounded-full ${label.dot}`} />
      {label.text}
    </span>
  );
}
