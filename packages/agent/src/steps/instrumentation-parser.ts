/**
 * Parses the raw output of `am instrument -w -r` as it streams in, reporting each test case the moment
 * its end status arrives. The format: blocks of "INSTRUMENTATION_STATUS: key=value" lines closed by
 * "INSTRUMENTATION_STATUS_CODE: n" (1 start, 2 in progress, 0 ok, -1 error, -2 failure, -3 ignored,
 * -4 assumption failure); values may span lines (stack=, stream=) until the next INSTRUMENTATION_ line;
 * the run ends with "INSTRUMENTATION_RESULT: key=value" lines and "INSTRUMENTATION_CODE: n" (-1 = ok).
 * A crash ends it early with "INSTRUMENTATION_RESULT: shortMsg=Process crashed." and leaves the running
 * test without an end.
 *
 * Each test is reported once, as ddmlib's InstrumentationResultParser (the Android tools' reference) and
 * AOSP's newer AmInstrumentationParser do: an end status is matched to its start by class and name, so ends
 * that arrive after the next test's start still pair up, and an end repeated without a new start is dropped.
 * A run that announced more tests (numtests) than it reported is not complete.
 */
import { LineSplitter } from "./line-splitter.ts";
import type { TestCase, TestCaseStatus } from "./step-types.ts";
import { messageBeforeStack, testMessage } from "./test-message.ts";

export interface InstrumentationRunResult {
  /** The run reached INSTRUMENTATION_CODE -1 with no run failure and no test left unfinished. */
  completed: boolean;
  /** The instrumented process crashed (or the system aborted the run). */
  crashed: boolean;
  /** One line saying why the run did not complete, else null. */
  message: string | null;
  /** INSTRUMENTATION_CODE, null when the output ended before it. */
  code: number | null;
}

const STATUS = "INSTRUMENTATION_STATUS: ";
const STATUS_CODE = "INSTRUMENTATION_STATUS_CODE: ";
const RESULT = "INSTRUMENTATION_RESULT: ";
const CODE = "INSTRUMENTATION_CODE: ";
const FAILED = "INSTRUMENTATION_FAILED: ";
const ABORTED = "INSTRUMENTATION_ABORTED: ";
const FATAL = "Fatal exception when running tests";

const END_STATUS: Record<number, TestCaseStatus> = {
  0: "passed",
  [-1]: "errored",
  [-2]: "failed",
  [-3]: "skipped",
  [-4]: "skipped",
};

type Started = { classname: string; name: string; at: number | null };

/** A test the parser reported, in the order reported. */
export interface SeenTest {
  classname: string;
  name: string;
  status: TestCaseStatus;
}

const keyOf = (classname: string, name: string) => `${classname}#${name}`;

export class InstrumentationParser {
  private readonly lines = new LineSplitter((line) => this.line(line), Number.POSITIVE_INFINITY);
  private readonly onTestCase: (testCase: TestCase) => void;
  private readonly now: (() => number) | undefined;
  private status = new Map<string, string>();
  private readonly result = new Map<string, string>();
  private target: Map<string, string> | null = null;
  private key: string | null = null;
  private value: string[] = [];
  /** Started tests without an end yet, by class#name; more than one when statuses interleave. */
  private readonly open = new Map<string, Started>();
  /** Tests whose end was reported since their last start: a repeated end for them is dropped. */
  private readonly ended = new Set<string>();
  private lastClassname: string | null = null;
  private readonly reported: SeenTest[] = [];
  private numtests: number | null = null;
  private code: number | null = null;
  private failure: string | null = null;
  /** A -2 status with no test (the process crashed before its test started): said when nothing says more. */
  private failureOutsideTests: string | null = null;
  private crashed = false;

  /** `now` (ms) gives test cases a duration from their start and end status; without it they have none. */
  constructor(onTestCase: (testCase: TestCase) => void, now?: () => number) {
    this.onTestCase = onTestCase;
    this.now = now;
  }

  /** Feeds raw output, in chunks of any size. */
  push(chunk: string): void {
    this.lines.push(chunk);
  }

  /** Feeds one complete line (without its newline). */
  line(line: string): void {
    if (line.startsWith(STATUS)) this.startValue(this.status, line.slice(STATUS.length));
    else if (line.startsWith(RESULT)) this.startValue(this.result, line.slice(RESULT.length));
    else if (line.startsWith(STATUS_CODE)) {
      this.commitValue();
      this.onStatus(Number.parseInt(line.slice(STATUS_CODE.length), 10));
      this.status = new Map();
    } else if (line.startsWith(CODE)) {
      this.commitValue();
      this.code = Number.parseInt(line.slice(CODE.length), 10);
    } else if (line.includes(FAILED)) {
      // Also seen wrapped: "android.util.AndroidException: INSTRUMENTATION_FAILED: pkg/runner".
      this.commitValue();
      this.failure ??= `instrumentation failed: ${line.slice(line.indexOf(FAILED) + FAILED.length)}`;
    } else if (line.includes(ABORTED)) {
      // "onError: commandError=false message=INSTRUMENTATION_ABORTED: System has crashed."
      this.commitValue();
      this.crashed = true;
      this.failure ??= line.slice(line.indexOf(ABORTED) + ABORTED.length) || "instrumentation aborted";
    } else if (this.key !== null) this.value.push(line);
  }

  /** The number of tests the runner announced (the largest numtests seen), null before any. */
  announced(): number | null {
    return this.numtests;
  }

  /** The tests reported so far, in order; after end(), including those that did not finish. */
  seen(): SeenTest[] {
    return this.reported.map((t) => ({ ...t }));
  }

  /** Ends the stream: reports tests left running as errored and says how the run ended. */
  end(): InstrumentationRunResult {
    this.lines.end();
    this.commitValue();
    const shortMsg = this.result.get("shortMsg");
    if (shortMsg !== undefined && /crash/i.test(shortMsg)) this.crashed = true;
    const fatal = this.result.get("stream")?.includes(FATAL) ? this.fatalException() : null;
    let message =
      this.failure ??
      shortMsg ??
      fatal ??
      this.failureOutsideTests ??
      (this.code === null
        ? "instrumentation output ended without INSTRUMENTATION_CODE"
        : this.code !== -1
          ? `instrumentation finished with code ${this.code}`
          : null);
    for (const started of this.open.values()) {
      message ??= `${started.classname}#${started.name} did not finish`;
      this.report(started, "errored", `did not finish: ${message}`, null);
    }
    this.open.clear();
    if (message === null && this.numtests !== null && this.reported.length < this.numtests) {
      message = `${this.reported.length} of ${this.numtests} tests ran`;
    }
    return { completed: message === null, crashed: this.crashed, message, code: this.code };
  }

  private startValue(target: Map<string, string>, text: string): void {
    this.commitValue();
    const eq = text.indexOf("=");
    this.target = target;
    this.key = eq === -1 ? text : text.slice(0, eq);
    this.value = [eq === -1 ? "" : text.slice(eq + 1)];
  }

  private commitValue(): void {
    if (this.key !== null && this.target !== null) this.target.set(this.key, this.value.join("\n").trimEnd());
    this.key = null;
    this.target = null;
    this.value = [];
  }

  private onStatus(code: number): void {
    const numtests = Number.parseInt(this.status.get("numtests") ?? "", 10);
    if (Number.isFinite(numtests)) this.numtests = Math.max(this.numtests ?? 0, numtests);
    const name = this.status.get("test");
    const classname = this.status.get("class") ?? this.lastClassname ?? "";
    if (name === undefined) {
      // A status without a test is about the run: "Error=Unable to find instrumentation info for: …".
      if (code === -1) this.failure ??= this.status.get("Error") ?? "instrumentation reported an error";
      // A failure without a test: under the orchestrator, the only test's process crashed before it started
      // (recorded in AOSP's AmInstrumentationParserTest, fixtures/transcripts/aosp-orchestrator-crash-before-
      // any-test.txt); the run did not run its tests, whatever INSTRUMENTATION_CODE says.
      if (code === -2) {
        const stack = this.status.get("stack") ?? "";
        if (/process crashed/i.test(stack)) this.crashed = true;
        this.failureOutsideTests ??=
          testMessage(messageBeforeStack(stack)) || "a test failed before it started";
      }
      return;
    }
    const key = keyOf(classname, name);
    if (code === 1) {
      this.lastClassname = classname;
      this.ended.delete(key);
      const previous = this.open.get(key);
      // The same test started again without an end: its first run never finished.
      if (previous !== undefined) this.report(previous, "errored", "did not report an end", null);
      this.open.set(key, { classname, name, at: this.now?.() ?? null });
      return;
    }
    const status = END_STATUS[code];
    if (status === undefined) return; // 2 (in progress) and codes this parser does not know
    if (this.ended.has(key)) return; // the runner repeated an end already reported
    const started = this.open.get(key) ?? { classname, name, at: null };
    this.open.delete(key);
    this.ended.add(key);
    const stack = this.status.get("stack") ?? null;
    // The exception's whole message, not its first line: a Kotlin assertion diff runs over several.
    const message = code === -3 ? "ignored" : testMessage(messageBeforeStack(stack ?? ""));
    this.report(started, status, message, stack);
  }

  private report(
    test: Started,
    status: TestCaseStatus,
    message: string | null,
    details: string | null,
  ): void {
    const duration = test.at !== null && this.now ? Math.max(0, this.now() - test.at) : null;
    this.reported.push({ classname: test.classname, name: test.name, status });
    this.onTestCase({
      classname: test.classname,
      name: test.name,
      status,
      duration_ms: duration,
      message,
      details,
    });
  }

  /** The exception line that follows "Fatal exception when running tests" in the result stream. */
  private fatalException(): string {
    const lines = (this.result.get("stream") ?? "").split("\n").map((l) => l.trim());
    const at = lines.findIndex((l) => l.includes(FATAL));
    return lines.slice(at + 1).find((l) => l !== "") ?? FATAL;
  }
}

/**
 * The tests of a listing run (`am instrument -r -e log true`: the runner reports every test as started and
 * passed without running it), in order, each once.
 */
export function listedTests(transcript: string): { classname: string; name: string }[] {
  const parser = new InstrumentationParser(() => {});
  parser.push(transcript);
  parser.end();
  return uniqueTests(parser.seen());
}

/** The tests an ended parser saw, each once, in the order they first came. */
export function uniqueTests(
  seen: ReadonlyArray<{ classname: string; name: string }>,
): { classname: string; name: string }[] {
  const listed = new Map<string, { classname: string; name: string }>();
  for (const { classname, name } of seen) listed.set(keyOf(classname, name), { classname, name });
  return [...listed.values()];
}
