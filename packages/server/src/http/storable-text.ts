/**
 * Text that no database of ours can store: PostgreSQL refuses U+0000 in text columns, and an unpaired UTF-16
 * surrogate has no UTF-8 encoding (SQLite would store a replacement character, PostgreSQL refuses it). What
 * clients send is checked once at the edge (API.md §2) so such text never reaches a query.
 */
export function isStorableText(text: string): boolean {
  return !text.includes("\0") && text.isWellFormed();
}

/** The RFC 6901 pointer of the first string or object key in `value` that is not storable text, if any. */
export function findUnstorableText(value: unknown, pointer = ""): string | undefined {
  if (typeof value === "string") return isStorableText(value) ? undefined : pointer || "/";
  if (value === null || typeof value !== "object") return undefined;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const found = findUnstorableText(value[i], `${pointer}/${i}`);
      if (found !== undefined) return found;
    }
    return undefined;
  }
  // Only parsed data (JSON, query strings, path parameters); a streamed or binary body is not text.
  if (ArrayBuffer.isView(value) || typeof (value as { pipe?: unknown }).pipe === "function") return undefined;
  for (const [key, item] of Object.entries(value)) {
    const keyPointer = `${pointer}/${escapePointerToken(key)}`;
    if (!isStorableText(key)) return keyPointer;
    const found = findUnstorableText(item, keyPointer);
    if (found !== undefined) return found;
  }
  return undefined;
}

function escapePointerToken(token: string): string {
  return token.replaceAll("~", "~0").replaceAll("/", "~1");
}
