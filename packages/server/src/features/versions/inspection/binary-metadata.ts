/** What inspection reads from an app binary: stored with the version and checked by `inspect` steps. */
export interface BinaryMetadata {
  /** `app` is a zipped `.app` bundle (an iOS build without the `Payload/` folder). */
  format: "apk" | "aab" | "ipa" | "app";
  platform: "android" | "ios";
  /** Android package, iOS CFBundleIdentifier. */
  package_name: string;
  /** versionName / CFBundleShortVersionString, exactly as written (e.g. "2.0.0-beta+7"). */
  version_name: string | null;
  /** Android versionCode (an integer) / iOS CFBundleVersion (a string). */
  version_code: number | string | null;
  /** Android only, else null. */
  min_sdk: number | null;
  /** Android only, else null. */
  target_sdk: number | null;
  /** iOS MinimumOSVersion, else null. */
  min_os_version: string | null;
  /** Android: sorted ABIs that ship native libraries (`lib/<abi>/*.so`); iOS: []. */
  abis: string[];
  /** Android: sorted requested permissions; iOS: []. */
  permissions: string[];
  /** Android android:debuggable (false when absent); iOS: false. */
  debuggable: boolean;
  /** The label when it is a plain string (a resource reference gives null) / CFBundleDisplayName ?? CFBundleName. */
  display_name: string | null;
}
