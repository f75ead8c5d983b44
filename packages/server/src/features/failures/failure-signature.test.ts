import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// What the agent makes of real device output is what the server receives: read the fixtures through its parsers.
import { parseTestResults } from "../../../../agent/src/apple/xcresult-tests.ts";
import { parseJUnit } from "../../../../agent/src/junit/parse-junit.ts";
import { InstrumentationParser } from "../../../../agent/src/steps/instrumentation-parser.ts";
import { type FailedTest, failureSignature } from "./failure-signature.ts";

const fixtures = join(import.meta.dirname, "../../../../agent/test/fixtures");
const fixture = (path: string) => readFileSync(join(fixtures, path), "utf8");

/** The failed and errored test cases the agent reports for a recorded `am instrument -r` transcript. */
function instrumentationFailures(path: string) {
  const cases: Array<{ name: string; status: string; message: string | null; details: string | null }> = [];
  const parser = new InstrumentationParser((testCase) => cases.push(testCase));
  parser.push(fixture(path));
  parser.end();
  return cases.filter((c) => c.status === "failed" || c.status === "errored");
}

/** A `stack=` status of a transcript, as the runner printed it (up to the next status line). */
function stackOf(path: string, index = 0): string {
  const blocks = fixture(path)
    .split(/^INSTRUMENTATION_STATUS: stack=/m)
    .slice(1);
  const block = blocks[index];
  if (block === undefined) throw new Error(`no stack ${index} in ${path}`);
  return block.split(/\r?\n(?=INSTRUMENTATION_)/)[0]?.replace(/\r\n/g, "\n") as string;
}

/** A failure as the agent reports it from a stack: the text before the first frame, and the whole stack. */
function fromStack(stack: string, packageNames: string[]): FailedTest {
  const lines = stack.split("\n");
  const firstFrame = lines.findIndex((line) => /^\s*at\s/.test(line));
  return { message: lines.slice(0, firstFrame).join("\n"), details: stack, packageNames };
}

const signatureOf = (test: FailedTest) => failureSignature(test)?.signature;

function only<T>(items: readonly T[]): T {
  if (items.length !== 1) throw new Error(`expected one, got ${items.length}`);
  return items[0] as T;
}

describe("the failure signature, on recorded instrumentation transcripts", () => {
  const shop = ["com.example.shop", "com.example.shop.test"];
  const cart = only(instrumentationFailures("instrumentation-failing.txt"));

  it("is the exception type, the message with its values as placeholders, and the first app frame", () => {
    const signature = failureSignature({
      message: cart.message ?? null,
      details: cart.details ?? null,
      packageNames: shop,
    });
    expect(signature).toMatchObject({
      exceptionType: "java.lang.AssertionError",
      message: "expected:<…> but was:<…>",
      // org.junit.Assert's four frames come first: framework code is skipped.
      frame: "com.example.shop.CartTest.removesItemFromCart",
      title: "AssertionError: expected:<…> but was:<…>",
    });
    expect(signature?.signature).toMatch(/^[0-9a-f]{24}$/);
  });

  it("groups the same failure with other numbers and line numbers, and moved code", () => {
    const moved = {
      message: "java.lang.AssertionError: expected:<5> but was:<17>",
      details: String(cart.details)
        .replace("expected:<2> but was:<3>", "expected:<5> but was:<17>")
        .replace("CartTest.kt:42", "CartTest.kt:97")
        .replace(/Assert\.java:\d+/g, "Assert.java:12"),
      packageNames: shop,
    };
    expect(signatureOf(moved)).toBe(signatureOf({ ...cart, packageNames: shop } as FailedTest));
  });

  it("does not group a different exception type, or a different first app frame", () => {
    const original = signatureOf({ ...cart, packageNames: shop } as FailedTest);
    const otherType = {
      message: "java.lang.IllegalStateException: expected:<2> but was:<3>",
      details: String(cart.details).replace("java.lang.AssertionError", "java.lang.IllegalStateException"),
      packageNames: shop,
    };
    const otherFrame = {
      ...cart,
      details: String(cart.details).replace(
        "com.example.shop.CartTest.removesItemFromCart",
        "com.example.shop.CartTest.addsItemToCart",
      ),
      packageNames: shop,
    } as FailedTest;
    expect(signatureOf(otherType)).not.toBe(original);
    expect(signatureOf(otherFrame)).not.toBe(original);
  });

  it("takes the first frame outside the frameworks when none is in the app (adam's log_8)", () => {
    const crash = only(instrumentationFailures("transcripts/adam-log_8-process-crashed.txt"));
    // The app is kz.kolesa (its tests kz.kolesa.tests): the failing frame is in a library, kz.library.
    const signature = failureSignature({
      ...crash,
      packageNames: ["kz.kolesa", "kz.kolesa.tests"],
    } as FailedTest);
    expect(signature).toMatchObject({
      exceptionType: "java.lang.NullPointerException",
      message: "Attempt to read from field '…' on a null object reference",
      frame: "kz.library.auth.domain.AuthInteractor.login",
    });
    // The same stack whose app frame comes later: the app's frame wins over the library's.
    const own = failureSignature({
      ...crash,
      details: String(crash.details).replace(
        "kz.library.auth.presentation.AuthViewModel",
        "kz.kolesa.auth.AuthViewModel",
      ),
      packageNames: ["kz.kolesa", "kz.kolesa.tests"],
    } as FailedTest);
    // Kotlin's numbered synthetic classes ($1) are left out with the line numbers.
    expect(own?.frame).toBe(
      "kz.kolesa.auth.AuthViewModel$onLoginClicked$$invokeSuspend$$inlined$let$lambda$.invokeSuspend",
    );
  });

  it("skips every framework frame: a crash in the runner has no frame (adam's log_13, ddmlib)", () => {
    const runner = failureSignature(
      fromStack(stackOf("transcripts/adam-log_13-crash-before-tests.txt"), ["com.example"]),
    );
    expect(runner).toMatchObject({ exceptionType: "java.lang.RuntimeException", frame: null });
    // Its message names classes and a component: names are kept (junit4 too), only values change.
    expect(runner?.message).toBe(
      "Exception thrown in onCreate() of ComponentInfo{com.example.test/androidx.test.runner.AndroidJUnitRunner}: java.lang.IllegalArgumentException: Could not find extra class com.malinskiy.adam.junit4.android.listener.TestAnnotationProducer",
    );
    const assumption = failureSignature(
      fromStack(stackOf("transcripts/ddmlib-assumption-failures-ignored.txt"), ["com.example.helloworld"]),
    );
    expect(assumption).toMatchObject({
      exceptionType: "org.junit.AssumptionViolatedException",
      message: "got: <false>, expected: is <true>",
      frame: "com.example.helloworld.FailureAssumptionTest.checkAssumptionIsSkipped",
    });
  });

  it("reads the orchestrator's crash message (AOSP, android-test #1834/#1935 era) without a type or frame", () => {
    const stacks = [
      stackOf("transcripts/aosp-orchestrator-crash-in-beforeclass.txt"),
      stackOf("transcripts/aosp-orchestrator-crash-before-any-test.txt"),
      stackOf("transcripts/modelled/orchestrator-crash-goes-on.txt"),
    ];
    const signatures = stacks.map((stack) => failureSignature(fromStack(stack, ["com.example"])));
    for (const signature of signatures) {
      expect(signature).toMatchObject({
        exceptionType: null,
        frame: null,
        message: expect.stringMatching(/^Test instrumentation process crashed\. Check \S+ for details$/),
      });
    }
  });
});

describe("the failure signature's placeholders", () => {
  const packageNames = ["com.example.basic"];
  const stack = (message: string, frame = "com.example.basic.LoginTest.signsIn(LoginTest.kt:42)") => ({
    message,
    details: `${message}\n\tat androidx.test.espresso.base.DefaultFailureHandler.handle(DefaultFailureHandler.java:55)\n\tat ${frame}\n\tat java.lang.reflect.Method.invoke(Native Method)`,
    packageNames,
  });
  const grouped: Array<[what: string, a: string, b: string]> = [
    [
      "identity hashes",
      "java.lang.IllegalStateException: ViewRootImpl@79d1c1d is not attached",
      "java.lang.IllegalStateException: ViewRootImpl@3f2a9e0 is not attached",
    ],
    [
      "hex",
      "androidx.test.espresso.NoMatchingViewException: No views in hierarchy found matching: with id: 0x7f0a0062",
      "androidx.test.espresso.NoMatchingViewException: No views in hierarchy found matching: with id: 0x7f0a01b3",
    ],
    [
      "UUIDs",
      "java.lang.IllegalStateException: order 0b6f4a52-1c3e-4d7a-9f0e-2a51c8e4b7d9 not found",
      "java.lang.IllegalStateException: order 9d1e7c3a-55b2-4e18-a0c4-7f3b2e9d1a60 not found",
    ],
    [
      "IDs",
      "java.lang.IllegalStateException: session a3f9c21b7e expired",
      "java.lang.IllegalStateException: session 77bd0e4f12 expired",
    ],
    [
      "quoted values",
      'java.lang.AssertionError: Expected "Welcome, Alice" but got "Sign in"',
      'java.lang.AssertionError: Expected "Welcome, Bob" but got "Loading…"',
    ],
    [
      "paths",
      "java.io.FileNotFoundException: /data/user/0/com.example.basic/files/cache-17.json (No such file or directory)",
      "java.io.FileNotFoundException: /storage/emulated/0/Download/export.json (No such file or directory)",
    ],
    [
      "numbers",
      "java.lang.IndexOutOfBoundsException: Index: 3, Size: 3",
      "java.lang.IndexOutOfBoundsException: Index: 12, Size: 7",
    ],
  ];
  it.each(grouped)("groups failures that differ only in %s", (_what, a, b) => {
    expect(signatureOf(stack(a))).toBe(signatureOf(stack(b)));
  });

  it("keeps apart failures whose words differ", () => {
    expect(signatureOf(stack("java.lang.IllegalStateException: session expired"))).not.toBe(
      signatureOf(stack("java.lang.IllegalStateException: session revoked")),
    );
  });

  it("counts at most 300 characters of the message's first line", () => {
    const long = "x".repeat(400);
    const signature = failureSignature(stack(`java.lang.AssertionError: ${long}\nsecond line`));
    expect(signature?.message).toHaveLength(300);
    expect(signatureOf(stack(`java.lang.AssertionError: ${long}y\nanother second line`))).toBe(
      signature?.signature,
    );
  });

  it("is none for a failure that says nothing", () => {
    expect(failureSignature({ message: null, details: null, packageNames })).toBeNull();
    expect(failureSignature({ message: " \n", details: "", packageNames })).toBeNull();
  });
});

describe("the failure signature of XCTest and Maestro failures", () => {
  const xcresult = parseTestResults(fixture("apple/xcresulttool-tests-unit-failures.json"));

  it("takes XCTest's source file as the frame, without its line", () => {
    const failed = ("cases" in xcresult ? xcresult.cases : []).find((c) => c.name === "testFoo");
    expect(failed?.message).toBe(
      'RandomStuffTests.swift:38: XCTAssertEqual failed: ("1") is not equal to ("2")',
    );
    const signature = failureSignature({
      message: failed?.message ?? null,
      details: failed?.details ?? null,
      packageNames: ["com.example.RandomStuff"],
    });
    expect(signature).toMatchObject({
      exceptionType: null,
      message: 'XCTAssertEqual failed: ("…") is not equal to ("…")',
      frame: "RandomStuffTests.swift",
    });
    const elsewhere = failureSignature({
      message: 'RandomStuffTests.swift:61: XCTAssertEqual failed: ("40") is not equal to ("41")',
      details: null,
      packageNames: ["com.example.RandomStuff"],
    });
    expect(elsewhere?.signature).toBe(signature?.signature);
    const otherFile = failureSignature({
      message: 'CartTests.swift:38: XCTAssertEqual failed: ("1") is not equal to ("2")',
      details: null,
      packageNames: ["com.example.RandomStuff"],
    });
    expect(otherFile?.signature).not.toBe(signature?.signature);
  });

  it("groups a failing Maestro flow's assertion by its words, not the values it quotes", () => {
    const report = parseJUnit(fixture("maestro-report-failing.xml"));
    if (!report.ok) throw new Error(report.error);
    const failed = report.testCases.find((c) => c.status === "failed");
    expect(failed?.message).toBe('Assertion is false: "Order confirmed" is visible');
    const signature = failureSignature({
      message: failed?.message ?? null,
      details: failed?.details ?? null,
      packageNames: ["com.example.shop"],
    });
    expect(signature).toMatchObject({
      exceptionType: null,
      message: 'Assertion is false: "…" is visible',
      frame: null,
    });
    const sameAssertion = failureSignature({
      message: 'Assertion is false: "Payment accepted" is visible',
      details: null,
      packageNames: ["com.example.shop"],
    });
    expect(sameAssertion?.signature).toBe(signature?.signature);
    const otherAssertion = failureSignature({
      message: 'Assertion is false: "Order confirmed" is not visible',
      details: null,
      packageNames: ["com.example.shop"],
    });
    expect(otherAssertion?.signature).not.toBe(signature?.signature);
  });
});
