/**
 * A library's error message, made fit to quote in an API error: parsers echo the bytes they choked on, and
 * those come from the upload, so control and non-ASCII characters are replaced and the text is cut short.
 */
const MAX_REASON_LENGTH = 160;

export function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  const firstLine = message.trim().split("\n", 1)[0] ?? "";
  const printable = firstLine.replace(/[^\x20-\x7e]/g, "?");
  return printable.length > MAX_REASON_LENGTH ? `${printable.slice(0, MAX_REASON_LENGTH)}…` : printable;
}
