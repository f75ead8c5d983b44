import { useRef, useState } from "react";

/**
 * A screenshot small enough to sit beside the failure; a click (or Enter) shows it as large as the window allows,
 * in a modal dialog that Escape or its Close button closes, giving focus back to the thumbnail.
 */
export function ScreenshotThumbnail({ url, alt }: { url: string; alt: string }) {
  const dialog = useRef<HTMLDialogElement>(null);
  const [broken, setBroken] = useState(false);
  if (broken) {
    return (
      <p className="flex h-72 w-40 items-center rounded-md border border-line bg-sunken p-3 text-xs text-muted">
        The screenshot could not be loaded: try its download link.
      </p>
    );
  }
  return (
    <>
      <button
        type="button"
        onClick={() => dialog.current?.showModal()}
        title="Enlarge the screenshot"
        className="block overflow-hidden rounded-md border border-line bg-sunken hover:border-accent"
      >
        <img
          src={url}
          alt={alt}
          onError={() => setBroken(true)}
          className="h-72 w-auto max-w-full object-contain"
        />
      </button>
      <dialog
        ref={dialog}
        aria-label={alt}
        className="m-auto max-h-[95vh] max-w-[95vw] rounded-lg border border-line bg-surface p-3 text-ink backdrop:bg-black/70"
      >
        <div className="mb-2 flex items-center justify-between gap-3">
          <span className="text-sm">{alt}</span>
          <button
            type="button"
            onClick={() => dialog.current?.close()}
            className="rounded-md border border-line px-3 py-1 text-sm hover:bg-sunken"
          >
            Close
          </button>
        </div>
        <img src={url} alt={alt} className="max-h-[82vh] w-auto max-w-full object-contain" />
      </dialog>
    </>
  );
}
