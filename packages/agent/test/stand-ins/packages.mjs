// What PackageManager keeps per device, and the checks `adb install` meets on the way in.
// Manifest facts come from the APK's real binary AndroidManifest.xml via
// @devicefarmer/adbkit-apkreader (loaded lazily: only `install` pays for it).
// Texts: packages/modules/adb client/adb_install.cpp (install_app_streamed: "Performing Streamed
// Install", "filename doesn't end .apk or .apex: %s", "adb: failed to stat %s: %s",
// "adb: failed to install %s: %s"); PackageManagerService/InstallPackageHelper failure strings
// as devices print them ("Failure [INSTALL_FAILED_TEST_ONLY: installPackageLI]",
// "Failure [INSTALL_FAILED_OLDER_SDK: Failed parse during installPackageLI: … Requires newer sdk
// version #N (current version is #M)]", "INSTALL_FAILED_VERSION_DOWNGRADE: Downgrade detected:
// Update version code N is older than current M", "INSTALL_PARSE_FAILED_NOT_APK: Failed to parse …").
import { existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { appendLine, paths, readJson, stateDir, writeJson } from "./state.mjs";

export function installedPackages(serial) {
  return readJson(paths.packages(serial), {});
}

async function readManifest(file) {
  const { default: ApkReader } = await import("@devicefarmer/adbkit-apkreader");
  const reader = await ApkReader.open(file);
  return reader.readManifest();
}

function vmdl() {
  return `/data/app/vmdl${100000000 + Math.floor(Math.random() * 900000000)}.tmp/base.apk`;
}

/** `adb install [flags] FILE`; returns the exit code after printing what adb prints. */
export async function install(serial, device, args) {
  const file = args[args.length - 1];
  const flags = new Set(args.slice(0, -1));
  for (const flag of flags) {
    if (!["-r", "-t", "-g", "-d", "--streaming"].includes(flag)) {
      process.stderr.write(`stand-in adb: unsupported: install flag ${flag}\n`);
      return 1;
    }
  }
  process.stdout.write("Performing Streamed Install\n");
  if (!file || !/\.(apk|apex)$/i.test(file)) {
    process.stderr.write(`adb: filename doesn't end .apk or .apex: ${file ?? ""}\n`);
    return 1;
  }
  if (/\.apex$/i.test(file)) {
    process.stderr.write("stand-in adb: unsupported: .apex install\n");
    return 1;
  }
  if (!existsSync(file) || !statSync(file).isFile()) {
    process.stderr.write(`adb: failed to stat ${file}: No such file or directory\n`);
    return 1;
  }
  const fail = (reason) => {
    process.stderr.write(`adb: failed to install ${file}: Failure [${reason}]\n`);
    return 1;
  };
  let manifest;
  try {
    manifest = await readManifest(file);
  } catch {
    const tmp = vmdl();
    return fail(`INSTALL_PARSE_FAILED_NOT_APK: Failed to parse ${tmp}: Failed to load asset path ${tmp}`);
  }
  const packages = installedPackages(serial);
  const minSdk = manifest.usesSdk?.minSdkVersion ?? 1;
  if (minSdk > device.sdk) {
    return fail(
      `INSTALL_FAILED_OLDER_SDK: Failed parse during installPackageLI: ${vmdl()} (at Binary XML file line #7): Requires newer sdk version #${minSdk} (current version is #${device.sdk})`,
    );
  }
  if (manifest.application?.testOnly === true && !flags.has("-t")) {
    return fail("INSTALL_FAILED_TEST_ONLY: installPackageLI");
  }
  const versionCode = manifest.versionCode ?? 0;
  const existing = packages[manifest.package];
  if (existing && versionCode < existing.versionCode && !flags.has("-d")) {
    return fail(
      `INSTALL_FAILED_VERSION_DOWNGRADE: Downgrade detected: Update version code ${versionCode} is older than current ${existing.versionCode}`,
    );
  }
  const permissions = (manifest.usesPermissions ?? []).map((p) => p.name);
  packages[manifest.package] = {
    package: manifest.package,
    versionCode,
    versionName: manifest.versionName ?? null,
    minSdkVersion: minSdk,
    targetSdkVersion: manifest.usesSdk?.targetSdkVersion ?? null,
    testOnly: manifest.application?.testOnly === true,
    instrumentation: manifest.instrumentation
      ? { name: manifest.instrumentation.name, targetPackage: manifest.instrumentation.targetPackage }
      : null,
    permissions,
    // Runtime permissions granted at install: -g grants all requested ones. The stand-in does not
    // know which are runtime ("dangerous") permissions, so it records all of them.
    grantedPermissions: flags.has("-g") ? permissions : [],
    flags: [...flags],
    apkPath: file,
    installs: (existing?.installs ?? 0) + 1,
    dataClears: existing?.dataClears ?? 0,
  };
  writeJson(paths.packages(serial), packages);
  // The lab's own record (not adb's output), kept across resets: whether the package was already on the device.
  appendLine(
    join(stateDir(), "installs.jsonl"),
    JSON.stringify({
      serial,
      package: manifest.package,
      alreadyInstalled: existing !== undefined,
      at: Date.now(),
    }),
  );
  process.stdout.write("Success\n");
  return 0;
}

/** `pm clear PKG`: PackageManagerShellCommand.runClear prints "Success" or "Failed". */
export function pmClear(serial, pkg) {
  const packages = installedPackages(serial);
  if (!packages[pkg]) {
    process.stderr.write("Failed\n");
    return 1;
  }
  packages[pkg].dataClears += 1;
  writeJson(paths.packages(serial), packages);
  process.stdout.write("Success\n");
  return 0;
}

export function pmList(serial, what, filter) {
  const packages = Object.values(installedPackages(serial));
  if (what === "packages") {
    for (const p of packages) {
      if (!filter || p.package.includes(filter)) process.stdout.write(`package:${p.package}\n`);
    }
    return 0;
  }
  if (what === "instrumentation") {
    for (const p of packages) {
      const i = p.instrumentation;
      if (!i || (filter && i.targetPackage !== filter)) continue;
      process.stdout.write(`instrumentation:${p.package}/${i.name} (target=${i.targetPackage})\n`);
    }
    return 0;
  }
  process.stderr.write(`stand-in adb: unsupported: pm list ${what}\n`);
  return 1;
}

/**
 * `pm path PKG`: "package:<path of its base APK>" (the framework's own "package:/system/framework/
 * framework-res.apk" for `android`); nothing and exit 1 for a package that is not installed.
 */
export function pmPath(serial, pkg) {
  if (pkg === "android") {
    process.stdout.write("package:/system/framework/framework-res.apk\n");
    return 0;
  }
  const installed = installedPackages(serial)[pkg];
  if (!installed) return 1;
  process.stdout.write(`package:/data/app/~~testbay==/${pkg}-1/base.apk\n`);
  return 0;
}
