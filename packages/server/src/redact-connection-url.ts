/**
 * Connection URLs (database, Redis, storage) carry passwords; any message or log line that shows one shows
 * it through here. Not the request-URL redactor of http/logging.ts: that one hides query values of API
 * calls, this one secrets in configuration, including URLs too malformed to parse (the very ones that end up
 * in error messages), so it works on the text rather than through `new URL`.
 */

const hidden = "***";

/** Query or keyword parameters whose values are secrets: password=, secret_access_key=, sslkey=, token=… */
const secretParameter =
  /(^|[?&;\s])([\w.-]*(?:pass|pwd|secret|token|key|credential|signature|auth)[\w.-]*)=([^&;\s#]*)/gi;

/**
 * Hides the password of every `scheme://user:password@` in `text` (`user:***@`; a user name alone, which
 * some services use as the secret, becomes `***@`, as does an s3:// URL's access key ID) and the value of every secret-looking parameter
 * (`?password=***`, `&secret_access_key=***`). Nested URLs (an S3 endpoint inside a storage URL) are
 * handled too. The userinfo runs to the last `@` before the next `scheme://` or `"`, so a password with an
 * unencoded blank, `/`, `#`, `?` or `@` in it is hidden whole rather than cut at its first special
 * character (text after the URL that holds an `@` is hidden too: too much rather than too little).
 *
 * @example redactConnectionUrl("postgres://app:pw@db:5432/testbay") // "postgres://app:***@db:5432/testbay"
 */
export function redactConnectionUrl(text: string): string {
  const segments = text.split("://");
  for (let i = 1; i < segments.length; i++) {
    // In an s3:// URL the "user name" would be an access key ID: hidden with the secret.
    const keyPair = /(^|[^a-z0-9+.-])s3$/i.test(segments[i - 1] ?? "");
    const segment = segments[i] ?? "";
    // A quote ends a URL quoted in a message; nothing else safely does (passwords hold blanks and slashes).
    const quote = segment.indexOf('"');
    const end = quote < 0 ? segment.length : quote;
    const at = end === 0 ? -1 : segment.lastIndexOf("@", end - 1);
    if (at < 0) continue;
    const userinfo = segment.slice(0, at);
    const colon = userinfo.indexOf(":");
    const shown = colon < 0 || keyPair ? hidden : `${userinfo.slice(0, colon)}:${hidden}`;
    segments[i] = shown + segment.slice(at);
  }
  return segments
    .join("://")
    .replace(secretParameter, (_match, before, name) => `${before}${name}=${hidden}`);
}

/**
 * A connection error as it may be logged: name, code and redacted message only. Client libraries attach
 * what they sent to their errors (ioredis a failed command's arguments, `AUTH user password` included;
 * Node's URL parser the whole `input`), and a logger would print every such member.
 */
export function loggableConnectionError(error: unknown): { type: string; message: string; code?: string } {
  if (!(error instanceof Error)) return { type: typeof error, message: redactConnectionUrl(String(error)) };
  const code = (error as { code?: unknown }).code;
  return {
    type: error.name,
    message: redactConnectionUrl(error.message),
    ...(typeof code === "string" ? { code } : {}),
  };
}
