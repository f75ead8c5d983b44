import { describe, expect, it } from "vitest";
import {
  findUnstorableText,
  isStorableText,
  storableDeviceText,
  storableDeviceTextOrNull,
} from "./storable-text.ts";

describe("storable text", () => {
  it("accepts ordinary text, including astral characters made of surrogate pairs", () => {
    expect(isStorableText("com.example.app ✓ 😀 é")).toBe(true);
    expect(isStorableText("")).toBe(true);
  });

  it("refuses U+0000 and unpaired surrogates, leading or trailing", () => {
    for (const text of ["\u0000", "a\u0000b", "\ud800", "x\udfffy", "😀".slice(0, 1), "😀".slice(1)]) {
      expect(isStorableText(text), JSON.stringify(text)).toBe(false);
    }
  });

  it("points at the first bad string or key, escaping the pointer", () => {
    expect(findUnstorableText({ a: "ok", b: ["ok", "bad\u0000"] })).toBe("/b/1");
    expect(findUnstorableText({ env: { "K\u0000": "v" } })).toBe("/env/K\u0000");
    expect(findUnstorableText({ "a/b": { "c~d": "\ud800" } })).toBe("/a~1b/c~0d");
    expect(findUnstorableText("\u0000")).toBe("/");
    expect(findUnstorableText({ n: 1, t: true, z: null, s: "fine" })).toBeUndefined();
  });

  it("walks bodies nested deeper than the call stack would allow", () => {
    let deep: unknown = "\u0000";
    for (let i = 0; i < 100_000; i++) deep = [deep];
    expect(findUnstorableText(deep)).toBe(`${"/0".repeat(100_000)}`);
  });

  it("walks null-prototype objects (parsed query strings) and leaves binary bodies alone", () => {
    const query = Object.assign(Object.create(null), { status: "\u0000" });
    expect(findUnstorableText(query)).toBe("/status");
    expect(findUnstorableText(Buffer.from([0, 0xff]))).toBeUndefined();
  });
});

describe("storableDeviceText", () => {
  it("leaves text every database can store as it is", () => {
    for (const text of ["", "plain", "tab\tand\nnewline", "émoji 😀 and 中文", "\\u0000 typed by a person"]) {
      expect(storableDeviceText(text)).toBe(text);
    }
  });

  it("escapes U+0000 as \\u0000", () => {
    expect(storableDeviceText("bin\0ary\0")).toBe("bin\\u0000ary\\u0000");
  });

  it("escapes unpaired surrogates, high or low, at either end or inside, and keeps pairs", () => {
    expect(storableDeviceText("\ud800")).toBe("\\ud800");
    expect(storableDeviceText("a\udc00")).toBe("a\\udc00");
    expect(storableDeviceText("\udbff\ud83d\ude00\udfff")).toBe("\\udbff😀\\udfff");
    // Reversed halves are two lone ones, not a pair.
    expect(storableDeviceText("\ude00\ud83d")).toBe("\\ude00\\ud83d");
  });

  it("makes text that is well-formed and free of U+0000", () => {
    const nasty = "\0\ud800\udc00\udc00\ud800x\0";
    const stored = storableDeviceText(nasty);
    expect(stored.isWellFormed()).toBe(true);
    expect(stored.includes("\0")).toBe(false);
    expect(stored).toBe("\\u0000𐀀\\udc00\\ud800x\\u0000");
  });

  it("passes null and undefined as null", () => {
    expect(storableDeviceTextOrNull(null)).toBeNull();
    expect(storableDeviceTextOrNull(undefined)).toBeNull();
    expect(storableDeviceTextOrNull("\0")).toBe("\\u0000");
  });
});
