import { describe, expect, it } from "vitest";
import { androidApiLevel, shortPermission } from "./android-sdk.ts";

describe("Android API levels and permissions as people read them", () => {
  it.each([
    [24, "API 24 (Android 7.0)"],
    [28, "API 28 (Android 9)"],
    [32, "API 32 (Android 12L)"],
    [35, "API 35 (Android 15)"],
    [99, "API 99"],
  ])("level %i is %s", (level, text) => {
    expect(androidApiLevel(level)).toBe(text);
  });

  it("shortens the platform's permissions only", () => {
    expect(shortPermission("android.permission.INTERNET")).toBe("INTERNET");
    expect(shortPermission("com.google.android.c2dm.permission.RECEIVE")).toBe(
      "com.google.android.c2dm.permission.RECEIVE",
    );
  });
});
