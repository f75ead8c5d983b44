import { useId, useMemo, useRef, useState } from "react";
import { commandFailed, type SessionCommand } from "../../api/command-log.ts";
import { useMediaQuery } from "../../app/use-media-query.ts";
import { useFixedHeightRows } from "../../components/use-fixed-height-rows.ts";
import { formatDuration } from "../../format/duration.ts";
import { commandName, displayPath, formatOffset } from "./command-words.ts";

/**
 * Rows are all the same height, so the virtualizer places 10,000 commands without measuring them: one line from
 * 640 px, two on a phone (the command's name and path on a line of their own, not cut to a few letters).
 */
const rowHeights = { wide: 44, phone: 60 };

const statusTone = (failed: boolean) =>
  failed
    ? "bg-red-100 text-red-900 dark:bg-red-900 dark:text-red-100"
    : "bg-emerald-100 text-emerald-900 dark:bg-emerald-900 dark:text-emerald-100";

function CommandRow({
  command,
  offsetMs,
  onSeek,
  selected,
  height,
}: {
  command: SessionCommand;
  offsetMs: number;
  onSeek: ((command: SessionCommand) => void) | undefined;
  selected: boolean;
  height: number;
}) {
  const failed = commandFailed(command);
  const name = commandName(command);
  const path = displayPath(command.path);
  const time = formatOffset(offsetMs);
  return (
    <li
      aria-label={`${command.index + 1}. ${command.method} ${path}: ${command.status}${failed ? " failed" : ""}`}
      data-failed={failed ? "" : undefined}
      style={{ height }}
      className={`flex flex-wrap content-center items-center gap-x-2 gap-y-1 border-b border-line px-2 text-sm last:border-0 sm:flex-nowrap ${
        failed ? "bg-red-50 dark:bg-red-950/40" : ""
      } ${selected ? "outline-2 -outline-offset-2 outline-accent" : ""}`}
    >
      <span className="hidden w-10 shrink-0 text-right text-xs text-muted tabular-nums sm:inline">
        {command.index + 1}
      </span>
      {onSeek ? (
        <button
          type="button"
          onClick={() => onSeek(command)}
          title="Show this moment in the video"
          className="w-24 shrink-0 rounded px-1 text-left font-mono text-xs text-accent tabular-nums hover:bg-sunken hover:underline"
        >
          {time}
          <span className="sr-only"> (show in the video)</span>
        </button>
      ) : (
        <span className="w-24 shrink-0 px-1 font-mono text-xs tabular-nums">{time}</span>
      )}
      <span className="w-14 shrink-0 font-mono text-xs font-medium">{command.method}</span>
      <span
        className="order-last min-w-0 basis-full truncate sm:order-none sm:flex-1 sm:basis-0"
        title={`${command.method} ${path}`}
      >
        {name && <span className="mr-2 font-medium">{name}</span>}
        <code className="text-xs text-muted">{path}</code>
      </span>
      <span
        className={`ml-auto shrink-0 rounded-full px-2 sm:ml-0 py-0.5 text-xs font-medium tabular-nums whitespace-nowrap ${statusTone(failed)}`}
      >
        {command.status}
        {failed && " failed"}
      </span>
      <span className="hidden w-16 shrink-0 text-right text-xs text-muted tabular-nums sm:inline">
        {formatDuration(command.ms)}
      </span>
    </li>
  );
}

/**
 * The session's commands in the order Appium answered them: when (after the session's start), which (method, W3C
 * name, path), how (Appium's status; failures marked in words and colour) and how long. Only the rows in view are
 * in the page, so a long session stays quick; "Failures only" narrows it to what went wrong. With a video, a
 * command's time shows that moment of it.
 */
export function CommandTimeline({
  commands,
  startedAt,
  onSeek,
  selected,
}: {
  commands: readonly SessionCommand[];
  /** The session's start on the device host's clock (ms since the epoch), which the commands' times share. */
  startedAt: number;
  onSeek: ((command: SessionCommand, offsetMs: number) => void) | undefined;
  selected: number | undefined;
}) {
  const [failuresOnly, setFailuresOnly] = useState(false);
  const failures = useMemo(() => commands.filter(commandFailed), [commands]);
  const shown = failuresOnly ? failures : commands;
  const scroller = useRef<HTMLDivElement>(null);
  const filterId = useId();
  const rowHeight = useMediaQuery("(min-width: 640px)") ? rowHeights.wide : rowHeights.phone;
  const { visible, before, after } = useFixedHeightRows(shown.length, scroller, rowHeight);
  const seek = onSeek && ((command: SessionCommand) => onSeek(command, command.at - startedAt));

  return (
    <div className="space-y-2">
      <div className="flex flex-wrap items-center justify-between gap-2 text-sm">
        <p className="text-muted">
          {commands.length} {commands.length === 1 ? "command" : "commands"}
          {failures.length > 0 && (
            <span className="text-red-700 dark:text-red-400"> · {failures.length} failed</span>
          )}
        </p>
        {failures.length > 0 && (
          <label htmlFor={filterId} className="flex items-center gap-2">
            <input
              id={filterId}
              type="checkbox"
              checked={failuresOnly}
              onChange={(event) => setFailuresOnly(event.target.checked)}
            />
            Failures only
          </label>
        )}
      </div>
      <div ref={scroller} className="max-h-[32rem] overflow-auto rounded-lg border border-line bg-surface">
        <ol aria-label="Commands">
          {before > 0 && <li aria-hidden style={{ height: before }} />}
          {visible.map((item) => {
            const command = shown[item.index];
            if (!command) return null;
            return (
              <CommandRow
                key={command.index}
                command={command}
                offsetMs={command.at - startedAt}
                onSeek={seek}
                selected={selected === command.index}
                height={rowHeight}
              />
            );
          })}
          {after > 0 && <li aria-hidden style={{ height: after }} />}
        </ol>
        {commands.length === 0 && <p className="p-3 text-sm text-muted">The session relayed no command.</p>}
      </div>
    </div>
  );
}
