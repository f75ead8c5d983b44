import { type ReactNode, useEffect, useId, useRef, useState } from "react";
import { primaryButton, quietButton } from "./settings-classes.ts";

/**
 * A secret the server shows once (a client's secret, a new person's password): focused when it appears so a
 * screen reader reads it out, copyable, and gone once dismissed, as it is when the page is left or reloaded. It
 * lives in this component's state only, never in the query cache or the URL.
 */
export function OneTimeSecret({
  title,
  children,
  copyText,
  copyLabel,
  onDone,
}: {
  title: string;
  /** What to say about it, and the secret itself. */
  children: ReactNode;
  /** What the copy button puts on the clipboard. */
  copyText: string;
  copyLabel: string;
  onDone: () => void;
}) {
  const panel = useRef<HTMLElement>(null);
  const copied = useRef<HTMLPreElement>(null);
  const headingId = useId();
  const [copyResult, setCopyResult] = useState("");

  useEffect(() => panel.current?.focus(), []);

  const copy = async () => {
    try {
      await navigator.clipboard.writeText(copyText);
      setCopyResult("Copied to the clipboard.");
    } catch {
      // No clipboard (a page served over plain HTTP from another host): select the text for a manual copy.
      const range = document.createRange();
      if (copied.current) range.selectNodeContents(copied.current);
      window.getSelection()?.removeAllRanges();
      window.getSelection()?.addRange(range);
      setCopyResult("The browser does not allow copying here: the text is selected, press Ctrl+C (⌘C).");
    }
  };

  return (
    <section
      ref={panel}
      tabIndex={-1}
      aria-labelledby={headingId}
      className="space-y-3 rounded-lg border-2 border-amber-400 bg-amber-50 p-4 text-sm outline-none focus-visible:ring-2 focus-visible:ring-accent dark:border-amber-600 dark:bg-amber-950"
    >
      <h3 id={headingId} className="font-semibold">
        {title}
      </h3>
      {children}
      <pre
        ref={copied}
        className="overflow-x-auto rounded-md border border-line bg-surface p-3 font-mono text-xs whitespace-pre"
      >
        {copyText}
      </pre>
      <div className="flex flex-wrap items-center gap-2">
        <button type="button" className={primaryButton} onClick={() => void copy()}>
          {copyLabel}
        </button>
        <button type="button" className={quietButton} onClick={onDone}>
          Done: I stored it
        </button>
        <p role="status" className="text-xs text-muted">
          {copyResult}
        </p>
      </div>
    </section>
  );
}
