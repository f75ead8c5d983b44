import { useQuery } from "@tanstack/react-query";
import { useEffect, useMemo, useRef, useState } from "react";
import { artifactTextQuery, textPreviewBytes } from "../../api/artifacts.ts";
import { ProblemMessage } from "../../components/problem-message.tsx";
import { formatBytes } from "../../format/bytes.ts";

/** Lines shown before "Show all": a failure's log cut is read at a glance, the rest on demand. */
const firstLines = 200;

/**
 * A text artifact inline: its first 256 KiB, the first 200 lines of them until the reader asks for all, lines
 * `highlight` picks marked (a logcat's errors and crashes), the box scrolled to the first of them with a few lines
 * of what led to it above. Scrolls in its own box, reachable by keyboard.
 */
export function TextExcerpt({
  url,
  label,
  highlight,
}: {
  url: string;
  /** Names the scrollable box for screen readers: "Logcat of signsIn". */
  label: string;
  highlight?: (line: string) => boolean;
}) {
  const text = useQuery(artifactTextQuery(url));
  const [all, setAll] = useState(false);
  const lines = useMemo(() => text.data?.text.replace(/\n$/, "").split("\n") ?? [], [text.data]);
  const shown = all ? lines : lines.slice(0, firstLines);
  const box = useRef<HTMLElement>(null);
  const firstMarked = highlight ? shown.findIndex(highlight) : -1;

  useEffect(() => {
    const element = box.current;
    const marked = element?.querySelector<HTMLElement>("[data-marked]");
    // Only the box scrolls (never the page): three lines of context stay above the first error. The box is
    // positioned, so a line's offsetTop is measured from it.
    if (firstMarked >= 0 && element && marked) element.scrollTop = Math.max(0, marked.offsetTop - 3 * 20);
  }, [firstMarked]);

  if (text.error) return <ProblemMessage error={text.error} />;
  if (!text.data) return <p className="text-xs text-muted">Loading {label.toLowerCase()}…</p>;
  return (
    <div className="space-y-1">
      <section
        ref={box}
        // biome-ignore lint/a11y/noNoninteractiveTabindex: the text scrolls, and keyboard readers must reach it
        tabIndex={0}
        aria-label={label}
        className="relative max-h-80 overflow-auto rounded-md border border-line bg-sunken p-2"
      >
        <pre className="font-mono text-xs leading-5 break-words whitespace-pre-wrap">
          {shown.map((line, index) => (
            <span
              // Lines have no identity but their place, and the list only ever grows at its end.
              // biome-ignore lint/suspicious/noArrayIndexKey: a line's position is its identity
              key={index}
              data-marked={index === firstMarked ? "" : undefined}
              className={
                highlight?.(line)
                  ? "block bg-red-100 text-red-950 dark:bg-red-950 dark:text-red-100"
                  : "block"
              }
            >
              {line || " "}
            </span>
          ))}
        </pre>
      </section>
      <div className="flex flex-wrap gap-x-3 text-xs text-muted">
        {lines.length > firstLines && (
          <button type="button" onClick={() => setAll(!all)} className="text-accent hover:underline">
            {all ? `Show the first ${firstLines} lines` : `Show all ${lines.length} lines`}
          </button>
        )}
        {text.data.truncated && (
          <span>
            The first {formatBytes(textPreviewBytes)} of {formatBytes(text.data.size)}: download it for the
            rest.
          </span>
        )}
      </div>
    </div>
  );
}
