/**
 * Reads an XCUITest test package: a zip of what `xcodebuild build-for-testing` writes to Build/Products (one
 * .xctestrun, the `*-Runner.app` hosts with the test bundles in their PlugIns, the app or not). What an agent
 * needs from it, and what the server checks before accepting it, comes from the .xctestrun: its test targets,
 * the bundle each runs in and the app each UI test target drives. Paths in the .xctestrun are relative to
 * `__TESTROOT__`, the folder the .xctestrun sits in, which is where the agent unpacks the zip.
 */
import { readInfoPlist } from "./info-plist.ts";
import { MAX_INFO_PLIST_BYTES, MAX_XCTESTRUN_BYTES } from "./limits.ts";
import { readPlistValue } from "./plist-value.ts";
import { printable } from "./printable.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";
import type { XctestInfo, XctestTarget } from "./xctest-info.ts";
import { readXctestrun, type XctestrunTarget } from "./xctestrun.ts";
import type { ZipArchive, ZipEntry } from "./zip-archive.ts";

/** Whether a zip entry is an .xctestrun (Finder's and ditto's `__MACOSX/._X` resource forks are not). */
export function isXctestrunEntry(name: string): boolean {
  if (!name.endsWith(".xctestrun")) return false;
  const parts = name.split("/");
  return parts[0] !== "__MACOSX" && !(parts[parts.length - 1] ?? "").startsWith("._");
}

export async function inspectXctestPackage(
  zip: ZipArchive,
  entries: readonly ZipEntry[],
): Promise<XctestInfo> {
  for (const entry of entries) {
    checkEntryPath(entry.name);
    if (entry.symlink) checkLinkTarget(entry.name, (await zip.read(entry, MAX_LINK_BYTES)).toString("utf8"));
  }
  const xctestrun = theXctestrun(entries);
  const plist = readPlistValue(await zip.read(xctestrun, MAX_XCTESTRUN_BYTES), "the .xctestrun");
  const { targets } = readXctestrun(plist);
  const tree = new ZipTree(entries);
  const root = xctestrun.name.includes("/") ? xctestrun.name.slice(0, xctestrun.name.lastIndexOf("/")) : "";
  const bundleIds = new Map<string, Promise<string>>();
  const bundleIdOf = (bundle: string) => {
    let id = bundleIds.get(bundle);
    if (!id) {
      id = readBundleId(zip, tree, bundle);
      bundleIds.set(bundle, id);
    }
    return id;
  };
  const read: XctestTarget[] = [];
  const seen = new Set<string>();
  for (const target of targets) {
    const resolved = await resolveTarget(target, root, tree, bundleIdOf);
    // A version 2 file lists a target once per test plan configuration; the first says what it is.
    if (seen.has(resolved.name)) continue;
    seen.add(resolved.name);
    read.push(resolved);
  }
  return { xctestrun: xctestrun.name, test_targets: read };
}

/**
 * The zip is unpacked on agents, so a name that would land outside the folder it is unpacked into is refused
 * here, where the uploader hears why, rather than skipped there.
 */
function checkEntryPath(name: string): void {
  const parts = name.split("/");
  if (name.startsWith("/") || name.includes("\\") || /^[A-Za-z]:/.test(name) || parts.includes("..")) {
    throw new UnsupportedBinaryError(
      `it holds ${printable(name)}, a path that leads out of the folder the zip is unpacked into`,
    );
  }
}

/** Longest symbolic link target we read; a path is at most 1024 bytes on macOS. */
const MAX_LINK_BYTES = 4096;

/**
 * A symbolic link the agent's unzip recreates must stay inside the products: one pointing elsewhere
 * (`/etc`, `../..`) would let a later entry written through it land outside the folder.
 */
function checkLinkTarget(name: string, target: string): void {
  const parts = name.split("/").slice(0, -1);
  let escapes = target.startsWith("/") || target.includes("\\") || target.includes("\0");
  for (const part of target.split("/")) {
    if (part === "" || part === ".") continue;
    if (part !== "..") parts.push(part);
    else if (parts.pop() === undefined) escapes = true;
  }
  if (escapes) {
    throw new UnsupportedBinaryError(
      `it holds ${printable(name)}, a symbolic link to ${printable(target)}, outside the folder the zip is unpacked into`,
    );
  }
}

/** The one .xctestrun at the zip's top or one folder down (the Products folder zipped with its name). */
function theXctestrun(entries: readonly ZipEntry[]): ZipEntry {
  const all = entries.filter((entry) => isXctestrunEntry(entry.name));
  const near = all.filter((entry) => entry.name.split("/").length <= 2);
  const [first, second] = near;
  if (first && second) {
    throw new UnsupportedBinaryError(
      `it holds ${near.length} .xctestrun files (${printable(first.name)}, ${printable(second.name)}${near.length > 2 ? ", …" : ""}); xcodebuild writes one per test plan and destination, and a test package runs one: zip the products with only the .xctestrun to run`,
    );
  }
  if (first) return first;
  const deeper = all[0];
  if (deeper) {
    throw new UnsupportedBinaryError(
      `its .xctestrun is ${printable(deeper.name)}, more than one folder down; the .xctestrun must be at the zip's top (zip the contents of Build/Products) or one folder down (zip the Products folder itself)`,
    );
  }
  throw new UnsupportedBinaryError(
    "it holds no .xctestrun; zip what xcodebuild build-for-testing writes to Build/Products (the .xctestrun and the folders beside it)",
  );
}

async function resolveTarget(
  target: XctestrunTarget,
  root: string,
  tree: ZipTree,
  bundleIdOf: (bundle: string) => Promise<string>,
): Promise<XctestTarget> {
  const named = `test target ${printable(target.name)}`;
  const host = target.testHostPath && inZip(target.testHostPath, root, null, named);
  if (host) needBundle(tree, host, `${named}'s test host (TestHostPath)`);
  const testBundle = target.testBundlePath && inZip(target.testBundlePath, root, host, named);
  if (testBundle) needBundle(tree, testBundle, `${named}'s test bundle (TestBundlePath)`);
  // The app under test may be left out (API.md §4b): the agent tests the version's own IPA whatever the zip
  // holds, so a copy here only tells which app the UI tests drive when the .xctestrun does not say it.
  const uiAppPath = target.uiTargetAppPath && inZip(target.uiTargetAppPath, root, host, named);
  const uiApp = uiAppPath && tree.hasFolder(uiAppPath) ? uiAppPath : null;
  return {
    name: target.name,
    bundle_id: target.testHostBundleIdentifier ?? (host ? await bundleIdOf(host) : null),
    ui_target_app: target.uiTargetAppBundleIdentifier ?? (uiApp ? await bundleIdOf(uiApp) : null),
  };
}

/**
 * Where a path of the .xctestrun is in the zip: `__TESTROOT__` is the .xctestrun's folder, `__TESTHOST__` the
 * test host's bundle. null for paths outside the products (`__PLATFORMS__/…/xctest` hosts logic tests, and
 * absolute paths point into the machine that built them), which the zip cannot hold.
 */
function inZip(path: string, root: string, host: string | null, named: string): string | null {
  const [placeholder, ...rest] = path.split("/");
  let base: string;
  if (placeholder === "__TESTROOT__") base = root;
  else if (placeholder === "__TESTHOST__" && host !== null) base = host;
  else return null;
  const parts = base === "" ? [] : base.split("/");
  for (const part of rest) {
    if (part === "" || part === ".") continue;
    if (part === "..") {
      throw new UnsupportedBinaryError(`${named} names ${printable(path)}, which leads out of the products`);
    }
    parts.push(part);
  }
  return parts.join("/");
}

function needBundle(tree: ZipTree, bundle: string, what: string): void {
  if (!tree.hasFolder(bundle)) {
    throw new UnsupportedBinaryError(
      `${what} ${printable(bundle)} is not in the zip; zip everything xcodebuild build-for-testing writes to Build/Products, not only the .xctestrun`,
    );
  }
}

/** A bundle's CFBundleIdentifier from its Info.plist (iOS bundles keep it at their top). */
async function readBundleId(zip: ZipArchive, tree: ZipTree, bundle: string): Promise<string> {
  const entry = tree.entry(`${bundle}/Info.plist`);
  if (!entry)
    throw new UnsupportedBinaryError(`${printable(bundle)} has no Info.plist to read its bundle ID from`);
  try {
    return readInfoPlist(await zip.read(entry, MAX_INFO_PLIST_BYTES)).package_name;
  } catch (error) {
    if (!(error instanceof UnsupportedBinaryError)) throw error;
    throw new UnsupportedBinaryError(`${printable(bundle)} is unreadable: ${error.message}`);
  }
}

/** The zip's names, sorted, to find an entry or a folder by prefix without a set of every folder. */
class ZipTree {
  readonly #names: string[];
  readonly #entries = new Map<string, ZipEntry>();

  constructor(entries: readonly ZipEntry[]) {
    for (const entry of entries) if (!this.#entries.has(entry.name)) this.#entries.set(entry.name, entry);
    this.#names = [...this.#entries.keys()].sort();
  }

  entry(name: string): ZipEntry | undefined {
    return this.#entries.get(name);
  }

  /** Whether some entry lies inside `folder` (zips list files, and folders only sometimes). */
  hasFolder(folder: string): boolean {
    const prefix = `${folder}/`;
    let low = 0;
    let high = this.#names.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if ((this.#names[mid] as string) < prefix) low = mid + 1;
      else high = mid;
    }
    return this.#names[low]?.startsWith(prefix) ?? false;
  }
}
