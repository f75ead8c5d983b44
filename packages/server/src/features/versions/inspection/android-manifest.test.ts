import { describe, expect, it } from "vitest";
import { readAndroidManifest } from "./android-manifest.ts";
import { ANDROID_NS, type AttributeValue, type ManifestElement } from "./manifest-element.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

const text = (value: string): AttributeValue => ({ kind: "string", value });

function element(name: string, attributes: Record<string, AttributeValue>, children: ManifestElement[] = []) {
  return {
    name,
    attributes: Object.entries(attributes).map(([qualified, value]) => {
      const android = qualified.startsWith("android:");
      return { namespace: android ? ANDROID_NS : "", name: qualified.replace(/^android:/, ""), value };
    }),
    children,
  };
}

describe("readAndroidManifest", () => {
  it("reads source-text values the way an AAB stores them", () => {
    const root = element(
      "manifest",
      { package: text("com.example.text"), "android:versionCode": text("0x1c8") },
      [
        element("uses-sdk", {
          "android:minSdkVersion": text("26"),
          "android:targetSdkVersion": text("Baklava"),
        }),
        element("application", {
          "android:debuggable": text("true"),
          "android:label": { kind: "reference" },
        }),
      ],
    );
    expect(readAndroidManifest(root)).toMatchObject({
      version_code: 456,
      min_sdk: 26,
      // A preview codename is no API level.
      target_sdk: null,
      debuggable: true,
      display_name: null,
    });
  });

  it("lists every kind of permission request once, sorted", () => {
    const permission = (tag: string, name: string) => element(tag, { "android:name": text(name) });
    const root = element("manifest", { package: text("com.example.p") }, [
      permission("uses-permission", "android.permission.INTERNET"),
      permission("uses-permission-sdk-23", "android.permission.CAMERA"),
      permission("uses-permission", "android.permission.INTERNET"),
      // Not a request: an app declaring its own permission.
      permission("permission", "com.example.p.PRIVATE"),
    ]);
    expect(readAndroidManifest(root).permissions).toEqual([
      "android.permission.CAMERA",
      "android.permission.INTERNET",
    ]);
  });

  it("reports what it cannot find as null, and debuggable as false", () => {
    expect(readAndroidManifest(element("manifest", { package: text("com.example.bare") }))).toEqual({
      package_name: "com.example.bare",
      version_name: null,
      version_code: null,
      min_sdk: null,
      target_sdk: null,
      permissions: [],
      debuggable: false,
      display_name: null,
    });
  });

  it("refuses a manifest without a package or with another root element", () => {
    expect(() => readAndroidManifest(element("manifest", {}))).toThrow(UnsupportedBinaryError);
    expect(() => readAndroidManifest(element("resources", { package: text("x") }))).toThrow(/<resources>/);
  });
});
