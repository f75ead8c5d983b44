import { useEffect, useState } from "react";

type Copied = "idle" | "copied" | "failed";

/** Copies text to the clipboard; where the Clipboard API is missing (plain http off localhost), the old way. */
async function copyText(text: string): Promise<void> {
  if (navigator.clipboard && window.isSecureContext) {
    await navigator.clipboard.writeText(text);
    return;
  }
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.style.position = "fixed";
  area.style.opacity = "0";
  document.body.append(area);
  area.select();
  const done = document.execCommand("copy");
  area.remove();
  if (!done) throw new Error("copy refused");
}

/**
 * A SHA-256 shortened to its first 12 hex digits (as git shortens commits), the whole value on hover and in
 * the copy button: what a person compares with `sha256sum` output.
 */
export function Sha256({ value, of }: { value: string; of: string }) {
  const [copied, setCopied] = useState<Copied>("idle");
  useEffect(() => {
    if (copied === "idle") return;
    if (copied === "failed") return; // the value stays shown until copied by hand
    const reset = setTimeout(() => setCopied("idle"), 2_000);
    return () => clearTimeout(reset);
  }, [copied]);
  const copy = () =>
    copyText(value).then(
      () => setCopied("copied"),
      () => setCopied("failed"),
    );
  return (
    <span className="inline-flex flex-wrap items-center gap-2">
      <code title={value} className="font-mono text-xs">
        {value.slice(0, 12)}…
      </code>
      <button
        type="button"
        onClick={copy}
        aria-label={`Copy the SHA-256 of ${of}`}
        className="rounded border border-line px-1.5 py-0.5 text-xs hover:bg-sunken"
      >
        Copy
      </button>
      <span role="status" className="text-xs text-muted">
        {copied === "copied" && "Copied"}
        {copied === "failed" && (
          // The browser would not copy: the whole value, to select by hand.
          <>
            Select it: <code className="font-mono break-all select-all">{value}</code>
          </>
        )}
      </span>
    </span>
  );
}
