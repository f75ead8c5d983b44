// A test's source file under --source-root: found by its class's name (Kotlin, Java, Swift), preferring the
// file under its package's directories, on the line its stack trace names or the line declaring the method.
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SourceFiles } from "./source-files.ts";

let dir: string;

async function put(file: string, text: string) {
  await mkdir(path.dirname(path.join(dir, file)), { recursive: true });
  await writeFile(path.join(dir, file), text);
}

beforeAll(async () => {
  dir = await mkdtemp(path.join(tmpdir(), "testbay-sources-"));
  await put(
    "app/src/androidTest/java/com/example/LoginTest.kt",
    "package com.example\nclass LoginTest {\n  @Test fun logsIn() {}\n}\n",
  );
  await put("other/src/test/java/org/other/LoginTest.kt", "package org.other\nclass LoginTest {}\n");
  await put("app/build/generated/com/example/CartTest.java", "class CartTest {}\n");
  await put(
    "ios/MyAppUITests/CheckoutTests.swift",
    "final class CheckoutTests: XCTestCase {\n\n  func testPays() {}\n}\n",
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

const failed = (classname: string, name: string, stack: string | null = null) => ({
  classname,
  name,
  stack_trace: stack,
  message: null,
});

describe("SourceFiles", () => {
  const sources = () => new SourceFiles(dir, dir);

  it("finds the class's file under its package, on the method's line", async () => {
    expect(await sources().locate(failed("com.example.LoginTest", "logsIn"))).toEqual({
      path: "app/src/androidTest/java/com/example/LoginTest.kt",
      line: 3,
    });
    expect((await sources().locate(failed("org.other.LoginTest$Nested", "x")))?.path).toBe(
      "other/src/test/java/org/other/LoginTest.kt",
    );
  });

  it("takes the line the stack trace names in that file", async () => {
    const stack = "java.lang.AssertionError\n\tat com.example.LoginTest.logsIn(LoginTest.kt:42)";
    expect((await sources().locate(failed("com.example.LoginTest", "logsIn", stack)))?.line).toBe(42);
  });

  it("finds an XCTest class by its name after the module, and skips build output", async () => {
    expect(await sources().locate(failed("MyAppUITests.CheckoutTests", "testPays()"))).toEqual({
      path: "ios/MyAppUITests/CheckoutTests.swift",
      line: 3,
    });
    expect(await sources().locate(failed("com.example.CartTest", "pays"))).toBeUndefined();
  });

  it("gives paths relative to the repository's root when the source root is below it", async () => {
    const below = new SourceFiles(path.join(dir, "ios"), dir);
    expect((await below.locate(failed("CheckoutTests", "testPays")))?.path).toBe(
      "ios/MyAppUITests/CheckoutTests.swift",
    );
  });
});
