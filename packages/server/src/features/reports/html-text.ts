/**
 * Text in the report to share (report-html.ts): test names, messages and stack traces are whatever a test or a
 * device printed, so every piece of it goes through `html` before it reaches the page; nothing is ever placed
 * in a script, a style or an unquoted attribute.
 */
const escapes: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Control characters other than tab and line breaks have no business on a page: shown as U+FFFD. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: these are the characters being replaced
const controls = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

/** Escaped for element content and double-quoted attribute values alike. */
export function html(text: string): string {
  return text.replace(controls, "\ufffd").replace(/[&<>"']/g, (c) => escapes[c] ?? c);
}

/**
 * `text` escaped, cut so that the escaped result takes at most `maxBytes` of UTF-8 (a name made of `<` is four
 * times longer escaped), with "…" where it was cut. The report's size limit (≤ 5 MB for 5,000 tests) is kept
 * by such cuts, never by dropping tests.
 */
export function htmlCut(text: string, maxBytes: number): { html: string; cut: boolean } {
  const whole = html(text);
  if (Buffer.byteLength(whole) <= maxBytes) return { html: whole, cut: false };
  let out = "";
  let bytes = 0;
  const room = Math.max(0, maxBytes - 3);
  for (const char of text) {
    const escaped = html(char);
    const size = Buffer.byteLength(escaped);
    if (bytes + size > room) break;
    out += escaped;
    bytes += size;
  }
  return { html: `${out}…`, cut: true };
}
