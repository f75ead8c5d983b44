/**
 * A test's failure message as the agent reports it: the whole text, line breaks kept, not its first line. JUnit
 * writers put several lines there (a Kotlin assertion's "expected:<…> but was:<…>" over many lines, an iOS
 * launch failure whose first line is a generic "Failed to launch" and whose cause follows). Capped at the
 * server's limit for a test_case event's message (4000 characters in its agent events schema): a longer one would
 * have the whole batch of events refused. Real messages are far shorter; what runs past the cap is a dump, whose
 * full text a JUnit writer also puts in the failure's body, which goes to the test's details (64 KiB).
 */

/** The server's maxLength for a test_case message (packages/server agent.schemas.ts TestCaseEvent). */
export const MAX_TEST_MESSAGE_CHARS = 4000;

/**
 * The text trimmed (blank lines around it dropped, spaces at line ends too, CRLF as LF), lines and indentation
 * kept; null when nothing is left. Cut to MAX_TEST_MESSAGE_CHARS with a line saying how much was left out.
 *
 * @example testMessage("expected:<[a\r\nb]>\r\n but was:<[a\r\nc]>  \n") // "expected:<[a\nb]>\n but was:<[a\nc]>"
 */
export function testMessage(text: string | null | undefined): string | null {
  if (text === null || text === undefined) return null;
  const whole = text
    .split(/\r\n|\r|\n/)
    .map((line) => line.trimEnd())
    .join("\n")
    .replace(/^\n+|\n+$/g, "");
  if (whole.trim() === "") return null;
  return cut(whole);
}

/**
 * A stack frame line: "\tat com.example.LoginTest.signsIn(LoginTest.kt:42)" (JVM, Android, JavaScript) or
 * "3   Shop   0x0000000104a1c2d4 main + 40" (a symbolicated Apple crash).
 */
const STACK_FRAME = /^\s*(?:at\s+\S|\d+\s+\S+\s+0x[0-9a-f]+\s)/i;

/**
 * A stack trace's text before its first frame: the exception's message, however many lines it has
 * ("org.junit.ComparisonFailure: expected:<[a\nb]> but was:<[a\nc]>" then the frames, as instrumentation
 * reports a failure, and as the Android Gradle plugin writes one in a JUnit body without a message attribute).
 * The whole text when it has no frame.
 */
export function messageBeforeStack(text: string): string {
  const lines = text.split("\n");
  const frame = lines.findIndex((line) => STACK_FRAME.test(line));
  return (frame < 0 ? lines : lines.slice(0, frame)).join("\n");
}

/** At most MAX_TEST_MESSAGE_CHARS characters, the marker included, never half of a surrogate pair. */
function cut(text: string): string {
  if (text.length <= MAX_TEST_MESSAGE_CHARS) return text;
  // The marker's length depends on the count it holds: size it for the largest count there can be.
  const room = MAX_TEST_MESSAGE_CHARS - marker(text.length).length;
  let end = room;
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}${marker(text.length - end)}`;
}

const marker = (left: number) => `\n… (${left} more characters)`;
