/**
 * Makes `xcodebuild test-without-building` test the version's own app (API.md §4b), not the copy of it that
 * `build-for-testing` put in the test package, nor nothing when the package was zipped without it.
 *
 * xcodebuild installs the app at each UI test target's `UITargetAppPath`, and the test host at `TestHostPath`,
 * onto the device before it runs the tests (man xcodebuild.xctestrun: "A developer can edit the parameters in
 * the xctestrun file and then provide the file to the xcodebuild test-without-building action"); whatever the
 * agent installed before is replaced by them. So the .xctestrun is edited to name the .app unpacked from the
 * version's IPA:
 * - `UITargetAppPath` of every target that has one becomes that .app's absolute path.
 * - A unit test target hosted by the app itself (its `TestHostPath` is the app: `TestHostBundleIdentifier` is
 *   the version's bundle ID, or, when the file does not say it, the host's name is the app's) gets a copy of
 *   the version's .app as its host, with the test bundles of the products' host (`PlugIns/*.xctest`) put into
 *   it: `TestBundlePath` is `__TESTHOST__/PlugIns/…`, so the bundle must lie inside whatever host is named.
 *
 * Editing the file rather than replacing the products' copy in place: it works the same whether or not the zip
 * holds a copy and whatever path the .xctestrun names (absolute paths included, which must not be written
 * to), leaves the unpacked products as they were uploaded, and needs no copy of the app for UI tests (the
 * common case). Both formats are handled: FormatVersion 1 (one dictionary per target at the top) and 2
 * (`TestConfigurations[].TestTargets[]`).
 */
import { cp, readdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { runProcess } from "../steps/process-runner.ts";
import { type PlistDict, type PlistValue, parseXmlPlist, writeXmlPlist } from "./xml-plist.ts";

export interface TestedApp {
  signal: AbortSignal;
  /** The .app bundle unpacked from the version's IPA or zipped .app. */
  appPath: string;
  /** Its bundle ID (the version's package name). */
  bundleId: string;
  /** Where copies of the app that host unit tests are made. */
  workDir: string;
}

/** What was changed, one line per target, for the step's log; or why the file could not be edited. */
export type PointedAt = { changes: string[] } | { error: string };

export async function pointXctestrunAtApp(xctestrun: string, app: TestedApp): Promise<PointedAt> {
  const unconverted = await toXml(xctestrun, app.signal);
  if (unconverted) return { error: unconverted };
  const parsed = parseXmlPlist(await readFile(xctestrun, "utf8"));
  const read = "value" in parsed ? parsed.value : null;
  if (!(read instanceof Map)) {
    const why = "error" in parsed ? parsed.error : "it is not a dictionary";
    return { error: `the test package's .xctestrun cannot be read to point it at the version's app: ${why}` };
  }
  const testRoot = path.dirname(path.resolve(xctestrun));
  const hosts = new Map<string, string>();
  const changes: string[] = [];
  for (const [name, target] of targetsOf(read)) {
    const uiApp = target.get("UITargetAppPath");
    if (typeof uiApp === "string") {
      target.set("UITargetAppPath", app.appPath);
      changes.push(`${name}: UITargetAppPath is the version's app`);
    }
    const host = target.get("TestHostPath");
    if (typeof host === "string" && hostedByTheApp(target, host, uiApp, app)) {
      const original = expand(host, testRoot);
      let copy = hosts.get(original);
      if (copy === undefined) {
        copy = path.join(app.workDir, `host-${hosts.size + 1}`, path.basename(app.appPath));
        await hostCopy(app.appPath, original, copy, testRoot);
        hosts.set(original, copy);
      }
      target.set("TestHostPath", copy);
      // The same app as host and target: one bundle, the one holding the tests, else one would replace the other.
      if (typeof uiApp === "string") target.set("UITargetAppPath", copy);
      changes.push(`${name}: TestHostPath is the version's app with the products' test bundles`);
    }
  }
  if (changes.length > 0) await writeFile(xctestrun, writeXmlPlist(read));
  return { changes };
}

/**
 * xcodebuild writes the .xctestrun as XML; one converted to a binary plist (which the server accepts too) is
 * turned back into XML in place with macOS's `plutil -convert xml1`, which xcodebuild reads as well. Null when
 * the file is XML now, else why not.
 */
async function toXml(xctestrun: string, signal: AbortSignal): Promise<string | null> {
  const head = await readFile(xctestrun).then((bytes) => bytes.subarray(0, 6).toString("latin1"));
  if (head !== "bplist") return null;
  const said: string[] = [];
  const converted = await runProcess({
    command: "plutil",
    args: ["-convert", "xml1", xctestrun],
    cwd: path.dirname(xctestrun),
    env: process.env,
    timeoutMs: 60_000,
    signal,
    onLine: (_stream, line) => {
      if (said.length < 5) said.push(line);
    },
  });
  if (converted.exitCode === 0) return null;
  const why = said.at(-1) ?? converted.spawnError ?? `exit code ${converted.exitCode}`;
  return `the test package's .xctestrun is a binary plist and plutil -convert xml1 failed: ${why}`;
}

/** Each target's name and dictionary, in either format. */
function targetsOf(plist: PlistDict): Array<[string, PlistDict]> {
  const metadata = plist.get("__xctestrun_metadata__");
  const version = metadata instanceof Map ? metadata.get("FormatVersion") : undefined;
  const isVersion2 = typeof version === "object" && "text" in version && Number(version.text) >= 2;
  const found: Array<[string, PlistDict]> = [];
  if (isVersion2) {
    const configurations = plist.get("TestConfigurations");
    for (const configuration of Array.isArray(configurations) ? configurations : []) {
      const targets = configuration instanceof Map ? configuration.get("TestTargets") : undefined;
      for (const target of Array.isArray(targets) ? targets : []) {
        if (target instanceof Map) found.push([nameOf(target, "?"), target]);
      }
    }
    return found;
  }
  for (const [key, value] of plist) {
    if (key !== "__xctestrun_metadata__" && value instanceof Map) found.push([nameOf(value, key), value]);
  }
  return found;
}

function nameOf(target: PlistDict, fallback: string): string {
  const name: PlistValue | undefined = target.get("BlueprintName");
  return typeof name === "string" ? name : fallback;
}

/**
 * Whether the target's test host is the app under test: an app-hosted unit test target (which may name the
 * same app as its UITargetAppPath, as man xcodebuild.xctestrun's example does). UI test targets are hosted by
 * their own -Runner app; logic tests by xctest (`__PLATFORMS__/…/xctest`).
 */
function hostedByTheApp(
  target: PlistDict,
  host: string,
  uiApp: PlistValue | undefined,
  app: TestedApp,
): boolean {
  if (target.get("IsUITestBundle") === true || !/\.app\/?$/.test(host)) return false;
  const id = target.get("TestHostBundleIdentifier");
  if (typeof id === "string") return id === app.bundleId;
  return host === uiApp || path.basename(host) === path.basename(app.appPath);
}

/** A path of the .xctestrun with `__TESTROOT__` expanded (test hosts are named from the products' folder). */
function expand(value: string, testRoot: string): string {
  return path.resolve(testRoot, value.replace(/^__TESTROOT__/, testRoot));
}

/**
 * The version's app copied to `copy`, with the test bundles of the products' host in its PlugIns. Only a host
 * inside the products gives its bundles: a path elsewhere on this machine is not the package's to copy.
 */
async function hostCopy(appPath: string, original: string, copy: string, testRoot: string): Promise<void> {
  await cp(appPath, copy, { recursive: true, verbatimSymlinks: true });
  if (!original.startsWith(`${testRoot}${path.sep}`)) return;
  const plugIns = path.join(original, "PlugIns");
  const bundles = await readdir(plugIns).catch(() => [] as string[]);
  for (const bundle of bundles.filter((name) => name.endsWith(".xctest"))) {
    await cp(path.join(plugIns, bundle), path.join(copy, "PlugIns", bundle), {
      recursive: true,
      verbatimSymlinks: true,
    });
  }
}
