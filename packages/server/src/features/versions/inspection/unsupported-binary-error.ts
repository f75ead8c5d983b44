/**
 * The upload is not an app binary we can read. The message finishes the sentence "The body is not an APK, AAB,
 * IPA or zipped .app: …" (the 400 `unsupported_binary` detail), so it starts in lower case and names what was
 * wrong. Anything else thrown by inspection (a missing file, a disk error) is our fault, not the caller's.
 */
export class UnsupportedBinaryError extends Error {
  override name = "UnsupportedBinaryError";
}
