/**
 * One small tree for both Android manifest encodings (binary XML in an APK, protobuf in an AAB), so the fields
 * are read from the manifest by one piece of code whatever the format.
 */

export const ANDROID_NS = "http://schemas.android.com/apk/res/android";

/**
 * Everything we read sits on <manifest> or its direct children (<uses-sdk>, <uses-permission>, <application>),
 * so the converters stop there: deeper elements cost time and stack and tell us nothing.
 */
export const MANIFEST_DEPTH = 2;

/** An attribute's value as the build tools compiled it; a reference (`@string/app_name`) is not resolved. */
export type AttributeValue =
  | { kind: "string"; value: string }
  | { kind: "int"; value: number }
  | { kind: "bool"; value: boolean }
  | { kind: "reference" }
  | { kind: "other" };

export interface ManifestAttribute {
  /** "" for attributes without a namespace (such as `package`). */
  namespace: string;
  name: string;
  value: AttributeValue;
}

export interface ManifestElement {
  name: string;
  attributes: ManifestAttribute[];
  children: ManifestElement[];
}
