/**
 * Lone surrogates (a high one not followed by a low one, a low one not preceded by a high one) and U+0000.
 * Without the `u` flag the pattern sees UTF-16 code units, which is what makes a lone half findable.
 */
const unstorable = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text that agents report from devices and tools (log lines, test names, messages, stack traces), made
 * storable: U+0000 (which PostgreSQL refuses in text) and unpaired surrogates (which have no UTF-8 form)
 * become the textual escapes `\u0000` and `\ud800`. Such output is not ours to refuse (API.md §2), and an
 * escape keeps what the tool printed readable where a replacement character would hide it. Every place that
 * stores agent text goes through this one function, so SQLite, PostgreSQL and the log blobs agree.
 */
export function storableDeviceText(text: string): string {
  // The common case, checked without building a new string.
  if (!text.includes("\0") && text.isWellFormed()) return text;
  return text.replace(unstorable, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The same for optional fields. */
export function storableDeviceTextOrNull(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : storableDeviceText(text);
}
