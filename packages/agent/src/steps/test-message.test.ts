import { describe, expect, it } from "vitest";
import { MAX_TEST_MESSAGE_CHARS, messageBeforeStack, testMessage } from "./test-message.ts";

describe("testMessage", () => {
  it("keeps every line and its indentation, trims around, and reads CRLF and CR as LF", () => {
    expect(testMessage("\n\n  expected:<[a\r\n  b]>  \r but was:<[a\n  c]>\n\n")).toBe(
      "  expected:<[a\n  b]>\n but was:<[a\n  c]>",
    );
  });

  it("is null for nothing, or only blanks", () => {
    expect(testMessage(null)).toBeNull();
    expect(testMessage(undefined)).toBeNull();
    expect(testMessage(" \n\t\n")).toBeNull();
  });

  it("keeps a message of exactly the cap as it is, and cuts one longer with the count of what was left out", () => {
    const exact = "x".repeat(MAX_TEST_MESSAGE_CHARS);
    expect(testMessage(exact)).toBe(exact);
    const cut = testMessage("x".repeat(MAX_TEST_MESSAGE_CHARS + 1)) ?? "";
    expect(cut.length).toBeLessThanOrEqual(MAX_TEST_MESSAGE_CHARS);
    const kept = cut.indexOf("\n");
    expect(cut.slice(kept)).toBe(`\n… (${MAX_TEST_MESSAGE_CHARS + 1 - kept} more characters)`);
  });

  it("does not cut between the two halves of a character outside the BMP", () => {
    const cut = testMessage("😀".repeat(MAX_TEST_MESSAGE_CHARS)) ?? "";
    const kept = cut.slice(0, cut.indexOf("\n"));
    expect(kept.isWellFormed()).toBe(true);
    expect(cut.length).toBeLessThanOrEqual(MAX_TEST_MESSAGE_CHARS);
  });
});

describe("messageBeforeStack", () => {
  it("stops at the first JVM or Apple frame, and takes a text without frames whole", () => {
    expect(
      messageBeforeStack("java.lang.AssertionError: two\nlines\n\tat a.B.c(B.kt:1)\n\tat d.E.f(E.kt:2)"),
    ).toBe("java.lang.AssertionError: two\nlines");
    expect(
      messageBeforeStack(
        "Test crashed\nSIGABRT\n0   libsystem_kernel.dylib   0x00000001a2b3c4d5 __pthread_kill + 8",
      ),
    ).toBe("Test crashed\nSIGABRT");
    expect(messageBeforeStack('Assertion is false: "Order confirmed" is visible')).toBe(
      'Assertion is false: "Order confirmed" is visible',
    );
    // "at" inside a sentence is no frame.
    expect(messageBeforeStack("Element not found\nlooked at the screen twice")).toBe(
      "Element not found\nlooked at the screen twice",
    );
  });
});
