/**
 * Every key of Flank's documented Android configuration (the commented reference in Flank's docs/index.md
 * "Android example" and test_runner/flank.yml, and the @JsonProperty names of its AndroidGcloudConfig,
 * CommonGcloudConfig, AndroidFlankConfig and CommonFlankConfig), and what Testbay does with it (API.md §14).
 *
 * `mapped`: read into the plan or the run. `ignored`: it has no meaning on Testbay; the text says what Testbay
 * does instead and is shown as one warning line. `renamed`: an old spelling Flank still reads (its
 * YamlDeprecated.kt); read as the new key, with a warning. A key in none of these lists is a typo: an error.
 */
export type KeyMeaning =
  | { kind: "mapped" }
  | { kind: "ignored"; instead: string }
  | { kind: "renamed"; to: string; section: FlankSection };

export type FlankSection = "gcloud" | "flank";

const mapped = { kind: "mapped" } as const;
const ignored = (instead: string): KeyMeaning => ({ kind: "ignored", instead });
const renamed = (to: string, section: FlankSection): KeyMeaning => ({ kind: "renamed", to, section });

const historyKept = "Testbay keeps every run's results and each test's history itself";
const shardsByHistory =
  "Testbay shards by each test's p80 duration over the plan's recent runs (15 s for a test never seen)";

export const gcloudKeys: Record<string, KeyMeaning> = {
  app: mapped,
  test: mapped,
  type: mapped,
  "test-targets": mapped,
  "test-runner-class": mapped,
  "environment-variables": mapped,
  "use-orchestrator": mapped,
  "directories-to-pull": mapped,
  "other-files": mapped,
  "additional-apks": mapped,
  "num-flaky-test-attempts": mapped,
  timeout: mapped,
  "record-video": mapped,
  device: mapped,
  "num-uniform-shards": mapped,
  "results-bucket": ignored(historyKept),
  "results-dir": ignored(historyKept),
  "results-history-name": ignored(`${historyKept}, per test plan`),
  async: ignored("testbay flank run returns once the runs are triggered unless --wait is given"),
  "client-details": ignored(
    "executions carry the CI's branch, commit and build URL, read from its variables",
  ),
  "network-profile": ignored("no network shaping, devices use the agent host's network"),
  "fail-fast": ignored("an infrastructure failure is retried as the plan's max_attempts says (default 1)"),
  "auto-google-login": ignored(
    "devices are used as their agent provides them (sign in on the device itself)",
  ),
  "grant-permissions": ignored(
    "the app is installed with adb install -g, which grants every runtime permission",
  ),
  "performance-metrics": ignored(
    "Testbay captures logcat (and video as record-video says), not performance metrics",
  ),
  "scenario-numbers": ignored("Testbay runs instrumentation tests, not game-loop tests"),
  "scenario-labels": ignored("Testbay runs instrumentation tests, not game-loop tests"),
  "obb-files": ignored("OBB files are not installed (push them with other-files)"),
  "obb-names": ignored("OBB files are not installed (push them with other-files)"),
  "robo-directives": ignored("Testbay runs instrumentation tests, not Robo tests"),
  "robo-script": ignored("Testbay runs instrumentation tests, not Robo tests"),
  "test-targets-for-shard": ignored(`${shardsByHistory}, not hand-made shards`),
  "parameterized-tests": ignored("parameterized tests are listed and sharded like any other test"),
  "flaky-test-attempts": renamed("num-flaky-test-attempts", "gcloud"),
  project: renamed("project", "flank"),
};

export const flankKeys: Record<string, KeyMeaning> = {
  "max-test-shards": mapped,
  "shard-time": mapped,
  "disable-sharding": mapped,
  "test-targets-always-run": mapped,
  "num-test-runs": mapped,
  "files-to-download": mapped,
  "local-result-dir": mapped,
  "run-timeout": mapped,
  "ignore-failed-tests": mapped,
  "output-style": mapped,
  project: ignored("there is no Google Cloud project, runs belong to the client's organization"),
  "smart-flank-gcs-path": ignored(historyKept),
  "smart-flank-disable-upload": ignored(historyKept),
  "use-average-test-time-for-new-tests": ignored(shardsByHistory),
  "default-test-time": ignored(shardsByHistory),
  "default-class-test-time": ignored(shardsByHistory),
  "custom-sharding-json": ignored(`${shardsByHistory}, not hand-made shards`),
  "full-junit-result": ignored("JUnitReport.xml always has every test case with its status and message"),
  "legacy-junit-result": ignored("JUnitReport.xml always has every test case with its status and message"),
  "keep-file-path": ignored("pulled files keep their device path under pulled/<shard>/"),
  "additional-app-test-apks": ignored(
    "a version has one test APK, so give each app/test pair its own flank file (one plan each)",
  ),
  "ignore-non-global-tests": ignored("every test the test APK lists is run"),
  "disable-results-upload": ignored(historyKept),
  "disable-usage-statistics": ignored("Testbay sends no usage statistics"),
  "output-report": ignored("use testbay --json for a machine-readable report"),
  "skip-config-validation": ignored(
    "the file is always checked, and a key Testbay does not know stops the run",
  ),
  testShards: renamed("max-test-shards", "flank"),
  shardTime: renamed("shard-time", "flank"),
  repeatTests: renamed("num-test-runs", "flank"),
  "repeat-tests": renamed("num-test-runs", "flank"),
  smartFlankGcsPath: renamed("smart-flank-gcs-path", "flank"),
  disableSharding: renamed("disable-sharding", "flank"),
};

/** The four device dimensions of `gcloud.device` entries. */
export const deviceKeys = ["model", "version", "locale", "orientation"] as const;

/** Keys only an iOS Flank file has: said as such, rather than as typos of Android keys. */
export const iosOnlyKeys = new Set([
  "xctestrun-file",
  "xcode-version",
  "test-special-entitlements",
  "additional-ipas",
  "app-path",
  "only-testing",
  "skip-testing",
  "test-plan",
]);

export function keysOf(section: FlankSection): Record<string, KeyMeaning> {
  return section === "gcloud" ? gcloudKeys : flankKeys;
}
