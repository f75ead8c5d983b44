/**
 * Text that no database of ours can store: PostgreSQL refuses U+0000 in text columns, and an unpaired UTF-16
 * surrogate has no UTF-8 encoding (SQLite would store a replacement character, PostgreSQL refuses it). What
 * clients send is checked once at the edge (API.md §2) so such text never reaches a query.
 */
export function isStorableText(text: string): boolean {
  return !text.includes("\0") && text.isWellFormed();
}

/**
 * Lone surrogates (a high one not followed by a low one, a low one not preceded by a high one) and U+0000.
 * Without the `u` flag the pattern sees UTF-16 code units, which is what makes a lone half findable.
 */
const unstorable = /\0|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text that agents report from devices and tools (log lines, test names, messages, stack traces), made
 * storable: U+0000 (which PostgreSQL refuses in text) and unpaired surrogates (which have no UTF-8 form)
 * become the textual escapes `\u0000` and `\ud800`. Such output is not ours to refuse, unlike what clients
 * send (refuse-unstorable-text.ts), and an escape keeps what the tool printed readable where a replacement
 * character would hide it. Every place that stores agent text goes through this one function, so SQLite,
 * PostgreSQL and the log blobs agree.
 */
export function storableDeviceText(text: string): string {
  // The common case, checked without building a new string.
  if (isStorableText(text)) return text;
  return text.replace(unstorable, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, "0")}`);
}

/** The same for optional fields. */
export function storableDeviceTextOrNull(text: string | null | undefined): string | null {
  return text === null || text === undefined ? null : storableDeviceText(text);
}

/**
 * The RFC 6901 pointer of the first string or object key in `value` that is not storable text, if any.
 * Walked with a list rather than recursion: a JSON body may nest thousands deep, past the call stack.
 */
export function findUnstorableText(value: unknown): string | undefined {
  const pending: Array<[unknown, string]> = [[value, ""]];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    const [item, pointer] = next;
    if (typeof item === "string") {
      if (!isStorableText(item)) return pointer || "/";
    } else if (Array.isArray(item)) {
      for (let i = item.length - 1; i >= 0; i--) pending.push([item[i], `${pointer}/${i}`]);
    } else if (
      item !== null &&
      typeof item === "object" &&
      // Only parsed data (JSON, query strings, path parameters); a streamed or binary body is not text.
      !ArrayBuffer.isView(item) &&
      typeof (item as { pipe?: unknown }).pipe !== "function"
    ) {
      const entries = Object.entries(item);
      for (let i = entries.length - 1; i >= 0; i--) {
        const [key, child] = entries[i] as [string, unknown];
        const childPointer = `${pointer}/${escapePointerToken(key)}`;
        if (!isStorableText(key)) return childPointer;
        pending.push([child, childPointer]);
      }
    }
  }
  return undefined;
}

function escapePointerToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}
