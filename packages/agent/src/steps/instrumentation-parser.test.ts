import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  expectedVerdict,
  fixtureName,
  ourVerdict,
  type ReferenceVerdict,
  referenceJsonPath,
  transcriptFiles,
} from "../../test/reference-parser/reference.ts";
import { InstrumentationParser, listedTests } from "./instrumentation-parser.ts";
import type { TestCase } from "./step-types.ts";
import { FIXTURES_DIR } from "./test-context.ts";

const fixture = (name: string) => readFileSync(join(FIXTURES_DIR, name), "utf8");
const transcript = (name: string) => fixture(join("transcripts", name));

function parse(text: string, chunkSize = text.length, now?: () => number) {
  const cases: TestCase[] = [];
  const parser = new InstrumentationParser((c) => cases.push(c), now);
  for (let at = 0; at < text.length; at += chunkSize) parser.push(text.slice(at, at + chunkSize));
  return { result: parser.end(), cases, parser };
}

const summary = (cases: TestCase[]) => cases.map((c) => `${c.classname}#${c.name} ${c.status}`);

describe("InstrumentationParser", () => {
  it("reads a passing run", () => {
    const { result, cases } = parse(fixture("instrumentation-passing.txt"));
    expect(result).toEqual({ completed: true, crashed: false, message: null, code: -1 });
    expect(summary(cases)).toEqual([
      "com.example.shop.CartTest#addsItemToCart passed",
      "com.example.shop.CartTest#removesItemFromCart passed",
      "com.example.shop.CheckoutTest#showsOrderTotal passed",
    ]);
    expect(cases[0]).toMatchObject({ message: null, details: null, duration_ms: null });
  });

  it("reads a failing test: the exception's message as message, the whole stack as details", () => {
    const { result, cases } = parse(fixture("instrumentation-failing.txt"));
    expect(result.completed).toBe(true);
    expect(summary(cases)).toEqual([
      "com.example.shop.CartTest#addsItemToCart passed",
      "com.example.shop.CartTest#removesItemFromCart failed",
      "com.example.shop.CheckoutTest#showsOrderTotal passed",
    ]);
    const failed = cases[1];
    expect(failed?.message).toBe("java.lang.AssertionError: expected:<2> but was:<3>");
    expect(failed?.details).toMatch(
      /^java\.lang\.AssertionError: expected:<2> but was:<3>\n\tat org\.junit\.Assert\.fail/,
    );
    expect(failed?.details).toMatch(
      /\tat android\.app\.Instrumentation\$InstrumentationThread\.run\(Instrumentation\.java:2205\)$/,
    );
    expect(failed?.details).not.toContain("INSTRUMENTATION_STATUS");
  });

  it("keeps an exception message of several lines whole, up to the stack's first frame", () => {
    // The failing fixture with a Kotlin assertion of two multi-line strings instead of expected:<2> but was:<3>.
    const text = fixture("instrumentation-failing.txt").replace(
      "stack=java.lang.AssertionError: expected:<2> but was:<3>\n",
      "stack=org.junit.ComparisonFailure: expected:<Subtotal  12.00\nTax        1.20> but was:<Subtotal  12.00\nTax        1.02>\n",
    );
    const failed = parse(text).cases[1];
    expect(failed?.message).toBe(
      "org.junit.ComparisonFailure: expected:<Subtotal  12.00\nTax        1.20> but was:<Subtotal  12.00\nTax        1.02>",
    );
    expect(failed?.details).toMatch(
      /^org\.junit\.ComparisonFailure: expected:<Subtotal {2}12\.00\nTax {8}1\.20> but/,
    );
    expect(failed?.details).toContain("\tat com.example.shop.CartTest.removesItemFromCart(CartTest.kt:42)");
  });

  it("reads a crash: the started test never finished and the run did not complete", () => {
    const { result, cases } = parse(fixture("instrumentation-crashing.txt"));
    expect(result).toEqual({ completed: false, crashed: true, message: "Process crashed.", code: 0 });
    expect(cases[1]).toMatchObject({
      classname: "com.example.shop.CartTest",
      name: "removesItemFromCart",
      status: "errored",
      message: "did not finish: Process crashed.",
    });
  });

  it("reads ignored tests and assumption failures as skipped", () => {
    const { result, cases } = parse(fixture("instrumentation-ignored-assumption.txt"));
    expect(result.completed).toBe(true);
    expect(summary(cases)).toEqual([
      "com.example.shop.CheckoutTest#showsOrderTotal passed",
      "com.example.shop.CheckoutTest#appliesVoucher skipped",
      "com.example.shop.CheckoutTest#paysWithGooglePay skipped",
    ]);
    expect(cases[1]?.message).toBe("ignored");
    expect(cases[2]?.message).toBe(
      "org.junit.AssumptionViolatedException: got: <false>, expected: is <true>",
    );
  });

  it("reads a run that could not start (runner not installed)", () => {
    const { result, cases } = parse(fixture("instrumentation-missing-runner.txt"));
    expect(cases).toEqual([]);
    expect(result).toMatchObject({ completed: false, crashed: false, code: null });
    expect(result.message).toBe(
      "Unable to find instrumentation info for: ComponentInfo{com.example.shop.test/androidx.test.runner.AndroidJUnitRunner}",
    );
  });

  it("says so when the output ends before INSTRUMENTATION_CODE", () => {
    const text = fixture("instrumentation-passing.txt").split("INSTRUMENTATION_RESULT")[0] ?? "";
    expect(parse(text).result).toEqual({
      completed: false,
      crashed: false,
      message: "instrumentation output ended without INSTRUMENTATION_CODE",
      code: null,
    });
  });

  it("gives the same result fed in small chunks, with CRLF line ends", () => {
    const text = fixture("instrumentation-failing.txt");
    const { result, cases } = parse(text);
    const chunked = parse(text.replaceAll("\n", "\r\n"), 7);
    expect({ result: chunked.result, cases: chunked.cases }).toEqual({ result, cases });
  });

  it("reports each test case as soon as its end status arrives", () => {
    const text = fixture("instrumentation-passing.txt");
    const cases: TestCase[] = [];
    const parser = new InstrumentationParser((c) => cases.push(c));
    const firstEnd =
      text.indexOf("INSTRUMENTATION_STATUS_CODE: 0\n") + "INSTRUMENTATION_STATUS_CODE: 0\n".length;
    parser.push(text.slice(0, firstEnd));
    expect(summary(cases)).toEqual(["com.example.shop.CartTest#addsItemToCart passed"]);
    parser.push(text.slice(firstEnd));
    parser.end();
    expect(cases).toHaveLength(3);
  });

  it("measures durations from start to end status with the given clock", () => {
    let now = 1_000;
    const cases: TestCase[] = [];
    const parser = new InstrumentationParser(
      (c) => cases.push(c),
      () => now,
    );
    for (const line of fixture("instrumentation-passing.txt").split("\n")) {
      parser.line(line);
      if (line.startsWith("INSTRUMENTATION_STATUS_CODE")) now += 250;
    }
    parser.end();
    expect(cases.map((c) => c.duration_ms)).toEqual([250, 250, 250]);
  });
});

describe("InstrumentationParser on recorded transcripts (test/fixtures/transcripts, see sources.md there)", () => {
  it("adam log_8: a crash after a failing test's end status; the multi-line stack kept whole", () => {
    const { result, cases, parser } = parse(transcript("adam-log_8-process-crashed.txt"));
    expect(result).toEqual({ completed: false, crashed: true, message: "Process crashed.", code: 0 });
    expect(cases).toHaveLength(9);
    expect(cases.slice(0, 8).every((c) => c.status === "passed")).toBe(true);
    const failed = cases[8];
    expect(failed).toMatchObject({
      classname: "kz.kolesa.tests.login.SignInEmptyDataTest",
      name: "signInWithEmptyPassword[1]",
      status: "failed",
      message:
        "java.lang.NullPointerException: Attempt to read from field 'java.lang.Object kz.library.network.model.Response.result' on a null object reference",
    });
    expect(failed?.details?.split("\n")).toHaveLength(9);
    expect(failed?.details).toMatch(/CoroutineScheduler\$Worker\.run\(CoroutineScheduler\.kt:665\)$/);
    expect(parser.announced()).toBe(9);
    expect(parser.seen()).toHaveLength(9);
  });

  it("adam log_13: the process crashed before any test ran (a -2 status with no test)", () => {
    const { result, cases, parser } = parse(transcript("adam-log_13-crash-before-tests.txt"));
    expect(cases).toEqual([]);
    expect(result).toEqual({ completed: false, crashed: true, message: "Process crashed.", code: 0 });
    expect(parser.announced()).toBeNull();
  });

  it("adam log_9: an in-progress status (code 2) without a test name is not a test", () => {
    const { result, cases } = parse(transcript("adam-log_9-in-progress-status.txt"));
    expect(result).toEqual({ completed: true, crashed: false, message: null, code: -1 });
    expect(summary(cases)).toEqual([
      "com.bofa.android.adapoc.home.HomeActivityTest#verify01_homeActivity_displayed passed",
    ]);
  });

  it("adam log_12: an @Ignore'd class (test=null, start then -3) is reported once, as skipped", () => {
    const { result, cases } = parse(transcript("adam-log_12-class-ignored.txt"));
    expect(result.completed).toBe(true);
    expect(summary(cases)).toEqual(["com.example.ClassIgnoredTest#null skipped"]);
    expect(cases[0]?.message).toBe("ignored");
  });

  it("ddmlib: ignored (-3) and assumption failure (-4) each reported once; CRLF stack read whole", () => {
    const { result, cases } = parse(transcript("ddmlib-assumption-failures-ignored.txt"));
    expect(result).toEqual({ completed: true, crashed: false, message: null, code: -1 });
    expect(summary(cases)).toEqual([
      "com.example.helloworld.FailureAssumptionTest#checkIgnoreTestsArePossible skipped",
      "com.example.helloworld.FailureAssumptionTest#checkAssumptionIsSkipped skipped",
      "com.example.helloworld.HelloWorldTest#testPreconditions passed",
    ]);
    expect(cases[1]?.message).toBe(
      "org.junit.AssumptionViolatedException: got: <false>, expected: is <true>",
    );
    expect(cases[1]?.details).not.toContain("\r");
    expect(cases[1]?.details?.split("\n")).toHaveLength(32);
  });

  it("ddmlib: a fatal exception in the runner fails the run even with code -1", () => {
    const { result, cases } = parse(transcript("ddmlib-fatal-exception.txt"));
    expect(cases).toEqual([]);
    expect(result).toEqual({
      completed: false,
      crashed: false,
      message:
        "java.lang.IllegalArgumentException: Ambiguous arguments: cannot provide both test package and test class(es) to run",
      code: -1,
    });
  });
});

describe("InstrumentationParser on recorded AndroidX Test Orchestrator output (sources.md there)", () => {
  it("android-test#1834: collection found nothing (the test APK's Application.onCreate threw): 'OK (0 tests)' with code 0 fails the run", () => {
    // ddmlib 25.2.2 calls this run clean (it does not read the code); it hid a broken test APK from its user.
    const { result, cases, parser } = parse(
      transcript("android-test-1834-orchestrator-nothing-collected.txt"),
    );
    expect(cases).toEqual([]);
    expect(parser.announced()).toBeNull();
    expect(result).toEqual({
      completed: false,
      crashed: false,
      message: "instrumentation finished with code 0",
      code: 0,
    });
  });

  it("android-test#1935: one test's own instrumentation output, as the orchestrator keeps it per test, is a clean run of no tests", () => {
    const { result, cases } = parse(transcript("android-test-1935-orchestrator-per-test-file.txt"));
    expect(cases).toEqual([]);
    expect(result).toEqual({ completed: true, crashed: false, message: null, code: -1 });
  });
});

describe("InstrumentationParser on orchestrator runs transcribed in AOSP's AmInstrumentationParserTest (sources.md)", () => {
  it("a test crashing in @BeforeClass: the -2 with the previous test's stale name does not end that test again; 1 of 2 ran fails the run", () => {
    const { result, cases } = parse(transcript("aosp-orchestrator-crash-in-beforeclass.txt"));
    expect(summary(cases)).toEqual(["com.example.Tests#testExample passed"]);
    expect(result).toEqual({ completed: false, crashed: false, message: "1 of 2 tests ran", code: -1 });
  });

  it("a -2 before the first test's start (no numtests yet): not a test; the crash it reports fails the run", () => {
    const { result, cases, parser } = parse(transcript("aosp-orchestrator-crash-in-first-beforeclass.txt"));
    expect(summary(cases)).toEqual(["com.example.Tests#testExample passed"]);
    expect(parser.announced()).toBe(2);
    expect(result).toEqual({
      completed: false,
      crashed: true,
      message:
        "Test instrumentation process crashed. Check com.example.CrashInBeforeClassTest#neverExecuted.txt for details",
      code: -1,
    });
  });

  it("the only test's process crashed before it started: the run fails with the crash, not clean", () => {
    const { result, cases } = parse(transcript("aosp-orchestrator-crash-before-any-test.txt"));
    expect(cases).toEqual([]);
    expect(result).toMatchObject({
      completed: false,
      crashed: true,
      message: "Test instrumentation process crashed. Check com.example.Tests#testExample.txt for details",
    });
  });
});

describe("InstrumentationParser: the issue's bugs, on transcripts derived from recorded ones", () => {
  it("reports each test once when a test's end arrives after the next test's start", () => {
    const { cases } = parse(transcript("derived/interleaved-from-adam-log_8.txt"));
    expect(summary(cases).slice(0, 2)).toEqual([
      "kz.kolesa.tests.advertdetails.AddAdvertToFavoritesTest#addAdvertToFavorite passed",
      "kz.kolesa.tests.advertdetails.AdvertDetailsTest#checkHeaderIsShown passed",
    ]);
    expect(cases).toHaveLength(9);
  });

  it("reports a test once when the runner sends its failure status twice", () => {
    const { result, cases } = parse(transcript("derived/repeated-failure-from-adam-log_8.txt"));
    expect(cases).toHaveLength(9);
    expect(cases.filter((c) => c.name === "signInWithEmptyPassword[1]").map((c) => c.status)).toEqual([
      "failed",
    ]);
    expect(result.message).toBe("Process crashed.");
  });

  it("does not call a run complete when fewer tests ran than numtests announced", () => {
    const { result, cases, parser } = parse(transcript("derived/fewer-than-announced-from-ddmlib.txt"));
    expect(cases).toHaveLength(2);
    expect(result).toEqual({ completed: false, crashed: false, message: "2 of 3 tests ran", code: -1 });
    expect(parser.announced()).toBe(3);
    expect(parser.seen()).toEqual([
      {
        classname: "com.example.helloworld.FailureAssumptionTest",
        name: "checkIgnoreTestsArePossible",
        status: "skipped",
      },
      {
        classname: "com.example.helloworld.FailureAssumptionTest",
        name: "checkAssumptionIsSkipped",
        status: "skipped",
      },
    ]);
  });

  it("seen() and announced() are available while the run streams in", () => {
    const text = transcript("adam-log_8-process-crashed.txt");
    const parser = new InstrumentationParser(() => {});
    parser.push(text.slice(0, text.indexOf("current=3")));
    expect(parser.announced()).toBe(9);
    expect(parser.seen().map((t) => t.name)).toEqual(["addAdvertToFavorite", "checkHeaderIsShown"]);
  });
});

describe("listedTests", () => {
  it("gives the ordered tests of a listing run (-e log true: every test started and passed)", () => {
    expect(listedTests(fixture("instrumentation-passing.txt"))).toEqual([
      { classname: "com.example.shop.CartTest", name: "addsItemToCart" },
      { classname: "com.example.shop.CartTest", name: "removesItemFromCart" },
      { classname: "com.example.shop.CheckoutTest", name: "showsOrderTotal" },
    ]);
  });

  it("lists each test once, whatever order or repetition its statuses came in", () => {
    const listed = listedTests(transcript("derived/interleaved-from-adam-log_8.txt"));
    expect(listed).toHaveLength(9);
    expect(listed[0]).toEqual({
      classname: "kz.kolesa.tests.advertdetails.AddAdvertToFavoritesTest",
      name: "addAdvertToFavorite",
    });
    expect(listedTests(transcript("derived/repeated-failure-from-adam-log_8.txt"))).toEqual(
      listedTests(transcript("adam-log_8-process-crashed.txt")),
    );
  });
});

describe("InstrumentationParser agrees with the reference parser's recorded verdicts", () => {
  for (const file of transcriptFiles()) {
    const name = fixtureName(file);
    it(name, () => {
      const recorded = JSON.parse(readFileSync(referenceJsonPath(file), "utf8")) as ReferenceVerdict;
      expect(ourVerdict(readFileSync(file, "utf8"))).toEqual(expectedVerdict(name, recorded));
    });
  }
});
