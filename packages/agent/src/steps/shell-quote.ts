/**
 * Quotes one word for a POSIX shell. `adb shell` joins its arguments with spaces and hands the line to the
 * device's sh, so every value from a plan must be quoted there or it could run commands on the device.
 */
export function shellQuote(word: string): string {
  // Inside single quotes nothing is special except the closing quote: end, add an escaped ', reopen.
  return `'${word.replaceAll("'", `'\\''`)}'`;
}
