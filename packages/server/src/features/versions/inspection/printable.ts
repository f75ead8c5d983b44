/**
 * Text from an upload (a plist key, a path in a zip) quoted in an error message: control and non-ASCII
 * characters replaced, cut short, in quotes, so the message stays one readable line whatever the bytes were.
 */
const MAX_QUOTED_LENGTH = 120;

export function printable(text: string): string {
  const shown = text.replace(/[^\x20-\x7e]/g, "?");
  return JSON.stringify(shown.length > MAX_QUOTED_LENGTH ? `${shown.slice(0, MAX_QUOTED_LENGTH)}…` : shown);
}
