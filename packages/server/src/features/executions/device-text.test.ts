import { describe, expect, it } from "vitest";
import { storableDeviceText, storableDeviceTextOrNull } from "./device-text.ts";

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
