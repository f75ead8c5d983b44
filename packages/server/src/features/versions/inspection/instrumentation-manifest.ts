/** Reads what a device needs to run an instrumentation (androidTest) APK from its decoded manifest. */
import { readAndroidManifest } from "./android-manifest.ts";
import { ANDROID_NS, type ManifestElement } from "./manifest-element.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

export interface InstrumentationInfo {
  /** The test APK's own package (com.example.app.test), what `am instrument` names before the runner. */
  package_name: string;
  /** `<instrumentation android:name>`, made absolute the way Android does for a name starting with ".". */
  runner: string;
  /** `<instrumentation android:targetPackage>`: the app under test. */
  target_package: string;
  min_sdk: number | null;
  target_sdk: number | null;
}

export function readInstrumentation(root: ManifestElement): InstrumentationInfo {
  const manifest = readAndroidManifest(root);
  // A test APK built by Gradle has exactly one; should there be several, the first is the one `am instrument`
  // lists first, and the one we report.
  const instrumentation = root.children.find((child) => child.name === "instrumentation");
  if (!instrumentation) {
    throw new UnsupportedBinaryError(
      `its AndroidManifest.xml (package ${manifest.package_name}) has no <instrumentation> element, so it is an app, not a test APK`,
    );
  }
  const name = stringAttribute(instrumentation, "name");
  const target = stringAttribute(instrumentation, "targetPackage");
  if (!name || !target) {
    throw new UnsupportedBinaryError(
      "its <instrumentation> element lacks android:name or android:targetPackage",
    );
  }
  return {
    package_name: manifest.package_name,
    runner: name.startsWith(".") ? `${manifest.package_name}${name}` : name,
    target_package: target,
    min_sdk: manifest.min_sdk,
    target_sdk: manifest.target_sdk,
  };
}

function stringAttribute(element: ManifestElement, name: string): string | null {
  const value = element.attributes.find((a) => a.namespace === ANDROID_NS && a.name === name)?.value;
  return value?.kind === "string" && value.value !== "" ? value.value : null;
}
