import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { FIXTURES_DIR } from "../steps/test-context.ts";
import { MAX_TEST_MESSAGE_CHARS } from "../steps/test-message.ts";
import { MAX_JUNIT_BYTES, parseJUnit } from "./parse-junit.ts";

const fixture = (name: string) => readFileSync(join(FIXTURES_DIR, name), "utf8");

function cases(xml: string) {
  const result = parseJUnit(xml);
  if (!result.ok) throw new Error(`expected a parse, got: ${result.error}`);
  return result.testCases;
}

describe("parseJUnit", () => {
  it("reads a Gradle report: a passed, a failed (message decoded, stack as details) and a skipped test", () => {
    const [euros, yen, bitcoin] = cases(fixture("junit-gradle.xml"));
    expect(euros).toEqual({
      classname: "com.example.shop.PriceFormatterTest",
      name: "formatsEuros()",
      status: "passed",
      duration_ms: 12,
      message: null,
      details: null,
    });
    expect(yen).toMatchObject({ status: "failed", duration_ms: 31 });
    expect(yen?.message).toBe("org.opentest4j.AssertionFailedError: expected: <¥1,200> but was: <¥1200>");
    expect(yen?.details).toContain(
      "\tat app//com.example.shop.PriceFormatterTest.formatsYen(PriceFormatterTest.kt:27)",
    );
    expect(bitcoin).toMatchObject({
      name: "formatsBitcoin()",
      status: "skipped",
      duration_ms: 0,
      message: null,
    });
  });

  it("reads a maestro report: the failure text is the message when there is no message attribute", () => {
    expect(cases(fixture("maestro-report-failing.xml"))).toEqual([
      {
        classname: "Login",
        name: "Login",
        status: "passed",
        duration_ms: 18204,
        message: null,
        details: null,
      },
      {
        classname: "Checkout",
        name: "Checkout",
        status: "failed",
        duration_ms: 23328,
        message: 'Assertion is false: "Order confirmed" is visible',
        details: 'Assertion is false: "Order confirmed" is visible',
      },
    ]);
  });

  it("reads pytest's <testsuites> with failure, error and skipped children", () => {
    const xml = `<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="1" failures="1"
      skipped="1" tests="4" time="0.210"><testcase classname="tests.test_api" name="test_ok" time="0.001" />
      <testcase classname="tests.test_api" name="test_total" time="0.004"><failure message="assert 3 == 4">def test_total():
&gt;       assert total([1, 2]) == 4
E       assert 3 == 4</failure></testcase>
      <testcase classname="tests.test_api" name="test_db" time="0.100"><error message="failed on setup with &quot;ConnectionRefusedError&quot;">fixture setup failed</error></testcase>
      <testcase classname="tests.test_api" name="test_later" time="0.000"><skipped type="pytest.skip" message="not ready">tests/test_api.py:20: not ready</skipped></testcase>
      </testsuite></testsuites>`;
    const [ok, total, db, later] = cases(xml);
    expect(ok?.status).toBe("passed");
    expect(total).toMatchObject({ status: "failed", message: "assert 3 == 4" });
    expect(total?.details).toContain(">       assert total([1, 2]) == 4");
    expect(db).toMatchObject({ status: "errored", message: 'failed on setup with "ConnectionRefusedError"' });
    expect(later).toMatchObject({ status: "skipped", message: "not ready" });
  });

  it("keeps a multi-line message whole: an assertion diff, a message in the body before its stack, a launch failure's cause", () => {
    const [totals, order, passed, launch] = cases(fixture("junit-multiline-messages.xml"));
    expect(totals).toMatchObject({ name: "printsTotals()", status: "failed" });
    expect(totals?.message).toBe(
      "expected:<Subtotal  12.00\nTax        1.20\nTotal     13.20> but was:<Subtotal  12.00\nTax        1.02\nTotal     13.02>",
    );
    // The body still goes to details as it is, stack and all.
    expect(totals?.details).toMatch(/^org\.junit\.ComparisonFailure: expected:<Subtotal {2}12\.00\nTax/);
    expect(totals?.details).toContain("at com.example.shop.ReceiptTest.printsTotals(ReceiptTest.kt:31)");
    // No message attribute: the body's text up to the first frame, its indentation kept.
    expect(order?.message).toBe(
      'java.lang.AssertionError: lines out of order:\n  line 2: "Tax" came before "Subtotal"\n  line 3: "Total" is missing',
    );
    expect(order?.details).toContain("\tat org.junit.Assert.fail(Assert.java:89)");
    expect(passed).toMatchObject({ name: "testPaysWithCard", status: "passed", message: null });
    expect(launch?.status).toBe("errored");
    expect(launch?.message?.split("\n")).toEqual([
      "Failed to launch app with identifier: com.example.shop and options: {",
      "    ActivateSuspended = 0;",
      "}",
      'The request was denied by service delegate (SBMainWorkspace) for reason: Security ("Unable to launch com.example.shop because it has an invalid code signature, inadequate entitlements or its profile has not been explicitly trusted by the user.").',
    ]);
    expect(launch?.details).toBeNull();
  });

  it("takes a body without frames whole, trimmed, CRLF as LF, and a blank message attribute as none", () => {
    const [crashed, blank] = cases(`<testsuite>
      <testcase name="crashes"><failure>

  Test crashed with signal kill.
  The app was terminated while the test ran: Shop (4242) exited with signal 9.   

</failure></testcase>
      <testcase name="blank"><failure message="  ">expected true</failure></testcase>
    </testsuite>`);
    expect(crashed?.message).toBe(
      "Test crashed with signal kill.\n  The app was terminated while the test ran: Shop (4242) exited with signal 9.",
    );
    expect(blank?.message).toBe("expected true");
  });

  it("cuts a message over the server's 4000 characters with a marker saying how much is left out", () => {
    const long = Array.from({ length: 300 }, (_, i) => `line ${i}: ${"x".repeat(20)}`).join("\n");
    const [test] = cases(`<testsuite><testcase name="t"><failure message="${long}"/></testcase></testsuite>`);
    expect(test?.message?.length).toBeLessThanOrEqual(MAX_TEST_MESSAGE_CHARS);
    expect(test?.message?.startsWith("line 0: x")).toBe(true);
    const marker = /\n… \((\d+) more characters\)$/.exec(test?.message ?? "");
    expect(marker).not.toBeNull();
    // What is kept and what the marker counts make up the whole message.
    const kept = (test?.message?.length ?? 0) - (marker?.[0].length ?? 0);
    expect(kept + Number(marker?.[1])).toBe(long.length);
  });

  it("walks nested suites, keeps a test case's own output and leaves CDATA undecoded", () => {
    const xml = `<testsuites><testsuite name="outer"><testsuite name="com.example.Inner" time="1">
      <testcase name="a" time="1,234.5"><system-out><![CDATA[raw &lt; text]]></system-out></testcase>
      <testsuite name="deeper"><testcase name="b" classname="X"/></testsuite></testsuite></testsuite></testsuites>`;
    expect(cases(xml)).toEqual([
      {
        classname: "com.example.Inner",
        name: "a",
        status: "passed",
        duration_ms: 1_234_500,
        message: null,
        details: "--- system-out ---\nraw &lt; text",
      },
      { classname: "X", name: "b", status: "passed", duration_ms: null, message: null, details: null },
    ]);
  });

  it("decodes numeric character references", () => {
    expect(cases(`<testsuite><testcase name="&#65;&#x42;&amp;lt;"/></testsuite>`)[0]?.name).toBe("AB&lt;");
  });

  it("does not expand entities declared in a DOCTYPE (no billion laughs)", () => {
    const levels = Array.from({ length: 9 }, (_, i) => `<!ENTITY lol${i + 1} "${`&lol${i};`.repeat(10)}">`);
    const xml = `<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol0 "lol">${levels.join("")}]>
      <testsuite><testcase name="t"><failure message="&lol9;">&lol9;</failure></testcase></testsuite>`;
    const [testCase] = cases(xml);
    expect(testCase?.message).toBe("&lol9;");
    expect(testCase?.details).toBe("&lol9;");
  });

  it("returns an error value, never throws, for broken or foreign files", () => {
    expect(parseJUnit("<testsuite><testcase></testsuite>")).toMatchObject({
      ok: false,
      error: expect.stringContaining("not well-formed XML"),
    });
    expect(parseJUnit("")).toMatchObject({ ok: false });
    expect(parseJUnit('{"json": true}')).toMatchObject({ ok: false });
    expect(parseJUnit("<html><body/></html>")).toEqual({
      ok: false,
      error: "no <testsuites> or <testsuite> root element",
    });
  });

  it("refuses a report over 50 MiB", () => {
    const result = parseJUnit(`<testsuite>${" ".repeat(MAX_JUNIT_BYTES)}</testsuite>`);
    expect(result).toEqual({ ok: false, error: "report is 50 MiB, over the 50 MiB limit" });
  });
});
