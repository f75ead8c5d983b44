import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { InstrumentationParser } from "./instrumentation-parser.ts";
import type { TestCase } from "./step-types.ts";
import { FIXTURES_DIR } from "./test-context.ts";

const fixture = (name: string) => readFileSync(join(FIXTURES_DIR, name), "utf8");

function parse(text: string, chunkSize = text.length, now?: () => number) {
  const cases: TestCase[] = [];
  const parser = new InstrumentationParser((c) => cases.push(c), now);
  for (let at = 0; at < text.length; at += chunkSize) parser.push(text.slice(at, at + chunkSize));
  return { result: parser.end(), cases };
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

  it("reads a failing test: first stack line as message, the whole stack as details", () => {
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
    const whole = parse(text);
    const chunked = parse(text.replaceAll("\n", "\r\n"), 7);
    expect(chunked).toEqual(whole);
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
