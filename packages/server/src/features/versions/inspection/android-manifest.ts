/** Reads the metadata fields from a decoded Android manifest (APK or AAB alike). */
import {
  ANDROID_NS,
  type AttributeValue,
  type ManifestAttribute,
  type ManifestElement,
} from "./manifest-element.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

export interface AndroidManifestInfo {
  package_name: string;
  version_name: string | null;
  version_code: number | null;
  min_sdk: number | null;
  target_sdk: number | null;
  permissions: string[];
  debuggable: boolean;
  display_name: string | null;
}

/**
 * <uses-permission-sdk-23> (alias -sdk-m) requests a permission on Android 6+ only; it is still a permission
 * the app can hold, so a `permissions_exclude` check must see it.
 */
const PERMISSION_TAGS = new Set(["uses-permission", "uses-permission-sdk-23", "uses-permission-sdk-m"]);

export function readAndroidManifest(root: ManifestElement): AndroidManifestInfo {
  if (root.name !== "manifest") {
    throw new UnsupportedBinaryError(`its AndroidManifest.xml has <${root.name}> at the top, not <manifest>`);
  }
  const packageName = asString(attribute(root, "", "package"));
  if (!packageName) throw new UnsupportedBinaryError("its AndroidManifest.xml declares no package name");

  const usesSdk = root.children.find((child) => child.name === "uses-sdk");
  const application = root.children.find((child) => child.name === "application");
  const permissions = new Set<string>();
  for (const child of root.children) {
    if (!PERMISSION_TAGS.has(child.name)) continue;
    const name = asString(attribute(child, ANDROID_NS, "name"));
    if (name) permissions.add(name);
  }
  const label = application && attribute(application, ANDROID_NS, "label");

  return {
    package_name: packageName,
    version_name: asString(attribute(root, ANDROID_NS, "versionName")),
    version_code: asInteger(attribute(root, ANDROID_NS, "versionCode")),
    min_sdk: usesSdk ? asInteger(attribute(usesSdk, ANDROID_NS, "minSdkVersion")) : null,
    target_sdk: usesSdk ? asInteger(attribute(usesSdk, ANDROID_NS, "targetSdkVersion")) : null,
    permissions: [...permissions].sort(),
    debuggable: (application && asBoolean(attribute(application, ANDROID_NS, "debuggable"))) ?? false,
    // A reference (@string/app_name) would need resources.arsc / resources.pb resolved: reported as unknown.
    display_name: asString(label),
  };
}

function attribute(element: ManifestElement, namespace: string, name: string): AttributeValue | undefined {
  return element.attributes.find((a: ManifestAttribute) => a.namespace === namespace && a.name === name)
    ?.value;
}

function asString(value: AttributeValue | undefined): string | null {
  return value?.kind === "string" ? value.value : null;
}

/**
 * Integers arrive typed in APKs, but an AAB's attribute `value` is the source text ("456", maybe "0x1c8");
 * anything else (a preview codename such as "VanillaIceCream", a reference) is not a number we can report.
 */
function asInteger(value: AttributeValue | undefined): number | null {
  if (value?.kind === "int") return value.value;
  if (value?.kind !== "string") return null;
  const text = value.value.trim();
  if (/^-?\d{1,10}$/.test(text)) return Number.parseInt(text, 10);
  if (/^0x[0-9a-f]{1,8}$/i.test(text)) return Number.parseInt(text.slice(2), 16);
  return null;
}

function asBoolean(value: AttributeValue | undefined): boolean | null {
  if (value?.kind === "bool") return value.value;
  if (value?.kind === "string" && (value.value === "true" || value.value === "false"))
    return value.value === "true";
  return null;
}
