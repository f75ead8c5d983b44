/** The longest client name, in characters (code points). */
export const maxClientNameLength = 100;

/** What a client name may be, said the same way by the admin CLI, the API and the schema's description. */
export const clientNameRule = `1–${maxClientNameLength} printable characters (no line breaks, tabs or other control characters)`;

// Control characters (line breaks and tabs among them), lone surrogates, and the Unicode line and paragraph
// separators: what would break a table row in `client list` or a line in the dashboard.
const unprintable = /[\p{Cc}\p{Cs}\u2028\u2029]/u;

/**
 * A client's name as stored: trimmed of surrounding blanks. Returns the name, or a sentence saying what is
 * wrong with it (the caller turns it into an AdminError or a 400 with its fix).
 */
export function checkClientName(name: string): { name: string } | { problem: string } {
  const trimmed = name.trim();
  const length = [...trimmed].length;
  if (length === 0) return { problem: "The client name is empty" };
  if (length > maxClientNameLength) {
    return {
      problem: `The client name is ${length} characters long; at most ${maxClientNameLength} are allowed`,
    };
  }
  if (unprintable.test(trimmed)) {
    return { problem: "The client name holds a line break, a tab or another control character" };
  }
  return { name: trimmed };
}
