/**
 * Runs ddmlib's InstrumentationResultParser (the Android tools' reference parser) on a transcript through
 * RefParse.java and boils its listener calls down to what our parser must agree on: which tests ended, with
 * which status, and whether the run failed.
 */
import { execFileSync } from "node:child_process";
import { existsSync, readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { InstrumentationParser } from "../../src/steps/instrumentation-parser.ts";
import type { TestCase } from "../../src/steps/step-types.ts";

export const TRANSCRIPTS_DIR = fileURLToPath(new URL("../fixtures/transcripts/", import.meta.url));
export const DERIVED_DIR = join(TRANSCRIPTS_DIR, "derived");
/**
 * Orchestrator transcripts printed by the stand-in's model of it (record-orchestrator.ts), not recorded: the
 * recorded orchestrator output (sources.md) has no run with tests in it.
 */
export const MODELLED_DIR = join(TRANSCRIPTS_DIR, "modelled");
const HARNESS = fileURLToPath(new URL("./RefParse.java", import.meta.url));

/** ddmlib's view of one test: ignored (-3) and assumption (-4) kept apart, -1 and -2 both "failed". */
export type ReferenceStatus = "passed" | "failed" | "ignored" | "assumption" | "incomplete";

export interface ReferenceVerdict {
  /** Which ddmlib produced it, so a recorded verdict says what it was checked against. */
  reference: string;
  /** testRunStarted's count: what the runner announced (numtests), 0 when none. */
  announced: number;
  /** One entry per testEnded, in order. */
  tests: { classname: string; name: string; status: ReferenceStatus }[];
  /** testRunFailed's message, null when the reference saw the run end cleanly. */
  runFailure: string | null;
}

type RefEvent = {
  event: string;
  classname?: string;
  name?: string;
  count?: string;
  trace?: string;
  message?: string;
};

/** Every transcript kept as a fixture: the recorded ones, then the derived ones, then the modelled ones. */
export function transcriptFiles(): string[] {
  const list = (dir: string) =>
    existsSync(dir)
      ? readdirSync(dir)
          .filter((f) => f.endsWith(".txt"))
          .sort()
          .map((f) => join(dir, f))
      : [];
  return [...list(TRANSCRIPTS_DIR), ...list(DERIVED_DIR), ...list(MODELLED_DIR)];
}

export const referenceJsonPath = (transcript: string) => transcript.replace(/\.txt$/, ".reference.json");

export const fixtureName = (transcript: string) =>
  transcript.startsWith(DERIVED_DIR)
    ? `derived/${basename(transcript)}`
    : transcript.startsWith(MODELLED_DIR)
      ? `modelled/${basename(transcript)}`
      : basename(transcript);

/**
 * The jars the harness needs, or null when this machine lacks them. Debian ships ddmlib in
 * libandroid-ddms-java; DDMLIB_JAR / GUAVA_JAR point elsewhere (e.g. an unpacked .deb).
 */
export function referenceClasspath(): string | null {
  const ddmlib = process.env.DDMLIB_JAR ?? "/usr/share/java/com.android.tools.ddms.ddmlib.jar";
  const guava = process.env.GUAVA_JAR ?? "/usr/share/java/guava.jar";
  if (!existsSync(ddmlib) || !existsSync(guava)) return null;
  try {
    execFileSync("java", ["-version"], { stdio: "ignore" });
  } catch {
    return null;
  }
  return `${ddmlib}:${guava}`;
}

export function runReference(transcript: string, classpath: string): ReferenceVerdict {
  const out = execFileSync("java", ["-cp", classpath, HARNESS, transcript], { encoding: "utf8" });
  const events = out
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => JSON.parse(l) as RefEvent);
  const jar = classpath.split(":")[0] ?? "";
  return summarize(events, `ddmlib InstrumentationResultParser from ${basename(jar)}`);
}

function summarize(events: RefEvent[], reference: string): ReferenceVerdict {
  const verdict: ReferenceVerdict = { reference, announced: 0, tests: [], runFailure: null };
  // ddmlib reports a status (failed/ignored/assumption) and then testEnded; remember the status per test.
  const pending = new Map<string, ReferenceStatus>();
  for (const e of events) {
    const key = `${e.classname}#${e.name}`;
    if (e.event === "runStarted") verdict.announced = Number(e.count);
    else if (e.event === "testFailed")
      pending.set(key, e.trace?.startsWith("Test failed to run to completion") ? "incomplete" : "failed");
    else if (e.event === "testIgnored") pending.set(key, "ignored");
    else if (e.event === "testAssumptionFailure") pending.set(key, "assumption");
    else if (e.event === "testEnded") {
      verdict.tests.push({
        classname: e.classname ?? "",
        name: e.name ?? "",
        status: pending.get(key) ?? "passed",
      });
      pending.delete(key);
    } else if (e.event === "runFailed") verdict.runFailure ??= e.message ?? "";
  }
  return verdict;
}

/** What our parser and the reference must agree on. */
export interface ComparableVerdict {
  announced: number;
  tests: { classname: string; name: string; status: ReferenceStatus }[];
  runFailed: boolean;
}

/** Our result in the reference's terms: -1/-2 both "failed", -3 "ignored", -4 "assumption". */
function asReference(testCase: TestCase): ReferenceStatus {
  if (testCase.status === "passed") return "passed";
  if (testCase.status === "skipped") return testCase.message === "ignored" ? "ignored" : "assumption";
  return testCase.message?.startsWith("did not finish") ? "incomplete" : "failed";
}

export function ourVerdict(transcript: string): ComparableVerdict {
  const cases: TestCase[] = [];
  const parser = new InstrumentationParser((c) => cases.push(c));
  parser.push(transcript);
  const result = parser.end();
  return {
    announced: parser.announced() ?? 0,
    tests: cases.map((c) => ({ classname: c.classname, name: c.name, status: asReference(c) })),
    runFailed: !result.completed,
  };
}

function failedWithCodeZero(ref: ReferenceVerdict): ReferenceVerdict {
  return { ...ref, runFailure: "instrumentation finished with code 0" };
}

/**
 * Where we knowingly differ from ddmlib 25.2.2 (the version Debian packages), and why; on every other
 * transcript our verdict must equal the reference's exactly.
 */
const KNOWN_DIFFERENCES: Record<string, (ref: ReferenceVerdict) => ReferenceVerdict> = {
  // 25.2.2 reports the repeated end status as a second result; AOSP's newer AmInstrumentationParser
  // (its test instrumentationCrashedReportingTestEndTwice) reports the test once, as we do.
  "derived/repeated-failure-from-adam-log_8.txt": (ref) => ({
    ...ref,
    tests: ref.tests.filter((t, i) => JSON.stringify(t) !== JSON.stringify(ref.tests[i - 1])),
  }),
  // 25.2.2 predates the check; newer ddmlib fails a run whose result stream holds "Fatal exception when
  // running tests" (its test testParse_missingTimeStamp_withStack), as we do.
  "ddmlib-fatal-exception.txt": (ref) => ({ ...ref, runFailure: "Fatal exception when running tests" }),
  // The orchestrator ends a run whose collection found nothing with RESULT_CANCELED (INSTRUMENTATION_CODE 0,
  // "OK (0 tests)"); 25.2.2 does not look at the code and calls it clean. We fail it ("instrumentation
  // finished with code 0"): the recorded run of android/android-test issue 1834 printed exactly this when the
  // test APK's Application.onCreate threw during collection, and a missing target instrumentation prints the
  // same under the orchestrator (nothing collected); neither may pass.
  "android-test-1834-orchestrator-nothing-collected.txt": failedWithCodeZero,
  // An orchestrated test crashed in @BeforeClass: the orchestrator's -2 status carries the previous test's
  // (stale) class and name. 25.2.2 ends that test a second time, as failed, and calls the run clean; AOSP's
  // newer AmInstrumentationParser (its test instrumentationCrashesInBeforeClassAnnotatedMethod, where this
  // transcript comes from) reports the test once and fails the run, "Expected 2 tests, received 1", as we do.
  "aosp-orchestrator-crash-in-beforeclass.txt": (ref) => ({
    ...ref,
    tests: ref.tests.filter(
      (t, i) => ref.tests.findIndex((u) => u.classname === t.classname && u.name === t.name) === i,
    ),
    runFailure: "Test run failed to complete. Expected 2 tests, received 1",
  }),
  "modelled/orchestrator-no-tests.txt": failedWithCodeZero,
  // The only orchestrated test's process crashed before the test started: a -2 status with no test. 25.2.2
  // calls the run clean; AOSP's newer AmInstrumentationParser fails it (its test
  // instrumentationCrashesBeforeAnyTestsRun, where this transcript comes from), as we do.
  "aosp-orchestrator-crash-before-any-test.txt": (ref) => ({
    ...ref,
    runFailure: "Test instrumentation process crashed. Check com.example.Tests#testExample.txt for details",
  }),
};

export function expectedVerdict(name: string, reference: ReferenceVerdict): ComparableVerdict {
  const adjusted = (KNOWN_DIFFERENCES[name] ?? ((r) => r))(reference);
  return {
    announced: adjusted.announced,
    tests: adjusted.tests.map(({ classname, name, status }) => ({ classname, name, status })),
    runFailed: adjusted.runFailure !== null,
  };
}
