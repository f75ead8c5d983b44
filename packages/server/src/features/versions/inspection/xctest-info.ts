/** What the server reads from an XCUITest test package (API.md §4b): what an agent needs to run it. */
export interface XctestInfo {
  /** The `.xctestrun` file's path inside the zip: what `xcodebuild test-without-building -xctestrun` takes. */
  xctestrun: string;
  test_targets: XctestTarget[];
}

export interface XctestTarget {
  /** The target's name (its BlueprintName, or its key in a FormatVersion 1 file): -only-testing's first part. */
  name: string;
  /** The bundle ID of the host the tests run in (the -Runner app for UI tests), as the plist gives it. */
  bundle_id: string | null;
  /** The UI target app's bundle ID: the app under test; null for unit tests hosted in no app. */
  ui_target_app: string | null;
}
