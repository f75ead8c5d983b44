/**
 * Text that no database of ours can store: PostgreSQL refuses U+0000 in text columns, and an unpaired UTF-16
 * surrogate has no UTF-8 encoding (SQLite would store a replacement character, PostgreSQL refuses it). What
 * clients send is checked once at the edge (API.md §2) so such text never reaches a query.
 */
export function isStorableText(text: string): boolean {
  return !text.includes("\0") && text.isWellFormed();
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
