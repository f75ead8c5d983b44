import { createHash } from "node:crypto";

/**
 * The signature of a failed test (API.md §16 "Failure groups"): failures with the same one are the same problem.
 * It is made of three parts, hashed into a short URL-safe key:
 * - the exception type (`androidx.test.espresso.NoMatchingViewException`), when the failure names one;
 * - the first line of the message, at most 300 characters, with what changes from run to run replaced by
 *   placeholders: UUIDs, URLs and paths, quoted values, hex and identity hashes, IDs, and numbers;
 * - the first stack frame in the app's own code, as class and method without the line number, so that moving
 *   code does not split a group. The app's own code is under the app's or the test package's package name;
 *   when no frame is, the first frame outside the platforms and test frameworks (FRAMEWORK_PREFIXES).
 *
 * What the agents send is read as they send it (packages/agent/src/steps/instrumentation-parser.ts): on Android
 * the message is the exception's text before its first frame and the details are the whole stack; XCTest puts
 * `File.swift:38: XCTAssertEqual failed: …` in the message (packages/agent/src/apple/xcresult-tests.ts), whose
 * source location stands for the frame; Maestro sends one line and no stack.
 */

/** Platform and test framework code: never the frame a failure is grouped by (API.md §16, exactly). */
export const FRAMEWORK_PREFIXES = [
  "java.",
  "javax.",
  "jdk.",
  "sun.",
  "kotlin.",
  "kotlinx.",
  "android.",
  "androidx.",
  "com.android.",
  "dalvik.",
  "libcore.",
  "junit.",
  "org.junit.",
  "org.hamcrest.",
  "XCTest",
  "UIKit",
  "Foundation",
] as const;

/** The most of the message's first line that counts, after its placeholders are put in. */
export const MAX_MESSAGE_CHARS = 300;

export interface FailedTest {
  message: string | null;
  /** The stack trace, or the longer output the agent sent beside the message. */
  details: string | null;
  /** The app's package name (bundle id on iOS) and the test package's: what counts as the app's own code. */
  packageNames: readonly string[];
}

export interface FailureSignature {
  /** 24 hex digits: the hash of the three parts. */
  signature: string;
  /** What a person reads for the group: the type and the message with placeholders, or the frame. */
  title: string;
  exceptionType: string | null;
  message: string;
  frame: string | null;
}

/** `java.lang.AssertionError: …`, `kotlin.UninitializedPropertyAccessException`, `Foo$BarException: …`. */
const EXCEPTION_LINE =
  /^((?:[A-Za-z_$][\w$]*\.)+[A-Za-z_$][\w$]*|[A-Za-z_$][\w$]*(?:Exception|Error|Throwable))(?::\s+|:?$)/;
/** A JVM frame: `at com.example.shop.CartTest.removesItem(CartTest.kt:42)`: class and method. */
const JVM_FRAME = /^\s*at\s+((?:[\w$<>-]+\.)*[\w$<>-]+)\.([\w$<>-]+)\s*\(/;
/** A symbolicated Apple frame: `3   Shop   0x0000000104a1c2d4 CartTests.testAdd() + 40`: module and symbol. */
const APPLE_FRAME = /^\s*\d+\s+(\S+)\s+0x[0-9a-fA-F]+\s+(.+?)(?:\s+\+\s+\d+)?\s*$/;
/** XCTest's source location before its message: `CartTests.swift:38: ` (the line number is not kept). */
const XCTEST_LOCATION = /^([\w.+-]+\.(?:swift|mm|m)):\d+:\s*/;

/** The signature of a failed test; null when it says nothing at all (no message, no details). */
export function failureSignature(test: FailedTest): FailureSignature | null {
  const messageLines = lines(test.message);
  const detailLines = lines(test.details);
  if (messageLines.length === 0 && detailLines.length === 0) return null;

  let headline = messageLines[0] ?? detailLines[0] ?? "";
  let frame: string | null = null;
  const location = XCTEST_LOCATION.exec(headline);
  if (location) {
    frame = location[1] as string;
    headline = headline.slice(location[0].length);
  }
  // The type from the stack's first line when there is one (a JUnit message attribute may leave it out).
  const typed = EXCEPTION_LINE.exec(detailLines[0] ?? "") ?? EXCEPTION_LINE.exec(headline);
  const exceptionType = typed ? (typed[1] as string) : null;
  if (exceptionType !== null && headline.startsWith(exceptionType)) {
    headline = headline.slice(exceptionType.length).replace(/^:\s*/, "");
  }
  const message = normalizedMessage(headline);
  frame ??= firstOwnFrame([...detailLines, ...messageLines.slice(1)], test.packageNames);

  const signature = createHash("sha256")
    .update(`${exceptionType ?? ""}\u0000${message}\u0000${frame ?? ""}`)
    .digest("hex")
    .slice(0, 24);
  const shortType = exceptionType?.split(".").at(-1) ?? null;
  const title =
    [shortType, message].filter((part) => part !== null && part !== "").join(": ") ||
    (frame ?? "(no message)");
  return { signature, title, exceptionType, message, frame };
}

/** The placeholders, most specific first: a UUID holds numbers and hex, a path may hold an ID. */
const REPLACEMENTS: ReadonlyArray<[RegExp, string]> = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, "<uuid>"],
  [/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>()]*/gi, "<url>"],
  // A quoted value: "…", '…' (not an apostrophe inside a word: can't), `…`, and JUnit's expected:<…>.
  [/"(?:[^"\\\n]|\\.)*"/g, '"…"'],
  [/(?<!\w)'[^'\n]*'(?!\w)/g, "'…'"],
  [/`[^`\n]*`/g, "`…`"],
  [/:<[^<>\n]*>/g, ":<…>"],
  // A path: from a slash not inside a word (/data/user/0/…, ./a/b, ~/x), up to a space or a delimiter.
  [/(?<![\w/])(?:~|\.{1,2})?\/[^\s"'<>(),;]+/g, "<path>"],
  [/\b0x[0-9a-f]+\b/gi, "<hex>"],
  // An identity hash: ViewRootImpl@79d1c1d.
  [/@[0-9a-f]+\b/gi, "@<hex>"],
  // An ID: a token of 8 or more letters and digits with both in it (a3f9c21b7e, user8812ab).
  [/\b(?=[\w-]*\d)(?=[\w-]*[a-z])[a-z0-9_-]{8,}\b/gi, "<id>"],
  // A number, not digits ending a name (junit4, Pixel7): those are names.
  [/(?<![A-Za-z_$])\d+/g, "<n>"],
];

function normalizedMessage(line: string): string {
  let text = line;
  for (const [pattern, placeholder] of REPLACEMENTS) text = text.replace(pattern, placeholder);
  return text.replace(/\s+/g, " ").trim().slice(0, MAX_MESSAGE_CHARS);
}

/** The first frame under the app's packages; else the first outside the frameworks; null without frames. */
function firstOwnFrame(stack: readonly string[], packageNames: readonly string[]): string | null {
  const frames = stack.map(frameOf).filter((frame) => frame !== null);
  const own = frames.find((frame) =>
    packageNames.some((name) => name !== "" && (frame.owner === name || frame.owner.startsWith(`${name}.`))),
  );
  const chosen =
    own ?? frames.find((frame) => !FRAMEWORK_PREFIXES.some((prefix) => frame.owner.startsWith(prefix)));
  return chosen ? chosen.name : null;
}

interface Frame {
  /** The class (JVM) or module (Apple) the frame is in: what the package names and prefixes are matched on. */
  owner: string;
  /** Class and method, without line numbers; synthetic classes' numbers ($1, $2) left out too. */
  name: string;
}

function frameOf(line: string): Frame | null {
  const jvm = JVM_FRAME.exec(line);
  if (jvm) {
    const owner = jvm[1] as string;
    return { owner, name: `${owner}.${jvm[2]}`.replace(/\$\d+/g, "$") };
  }
  const apple = APPLE_FRAME.exec(line);
  if (apple) return { owner: apple[1] as string, name: `${apple[1]} ${apple[2]}` };
  return null;
}

function lines(text: string | null): string[] {
  if (text === null) return [];
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== "");
}
