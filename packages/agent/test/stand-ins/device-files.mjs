// `adb push` and `adb pull` of files and directories on the device's file state (the device's `fs` folder).
// Texts: packages/modules/adb client/file_sync_client.cpp (do_sync_push / do_sync_pull) and captures:
// - a missing remote for pull: "adb: error: failed to stat remote object 'P': No such file or directory"
//   from a device with stat v2 (Android 8, API 26, and later), "adb: error: remote object 'P' does not exist"
//   from older ones (sync_stat_fallback's ENOPROTOOPT path); exit 1.
// - a missing local for push: "adb: error: cannot stat 'P': No such file or directory"; exit 1.
// - the summary, one line on stdout: "P: N file(s) pushed|pulled, 0 skipped. X MB/s (B bytes in Ts)".
// - a directory pulled into an existing local directory lands as a child of it, named after the remote's
//   last segment; pushed into an existing remote directory, the same (the source's last segment).
import { copyFileSync, existsSync, mkdirSync, readdirSync, statSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { hostPath } from "./state.mjs";

function fail(message) {
  process.stderr.write(`${message}\n`);
  return 1;
}

function rate(bytes, seconds) {
  return `${(bytes / 1024 / 1024 / Math.max(seconds, 0.001)).toFixed(1)} MB/s (${bytes} bytes in ${seconds.toFixed(3)}s)`;
}

/** Copies a file or a tree; returns [files, bytes]. */
function copyTree(from, to) {
  if (statSync(from).isDirectory()) {
    mkdirSync(to, { recursive: true });
    let files = 0;
    let bytes = 0;
    for (const name of readdirSync(from).sort()) {
      const [f, b] = copyTree(join(from, name), join(to, name));
      files += f;
      bytes += b;
    }
    return [files, bytes];
  }
  mkdirSync(dirname(to), { recursive: true });
  copyFileSync(from, to);
  return [1, statSync(to).size];
}

function summary(what, verb, files, bytes, started) {
  return `${what}: ${files} file${files === 1 ? "" : "s"} ${verb}, 0 skipped. ${rate(bytes, (Date.now() - started) / 1000)}\n`;
}

export function pull(device, args) {
  const [remote, local = "."] = args;
  if (remote === undefined) return fail("adb: usage: adb pull [-a] [-z ALGORITHM] [-Z] REMOTE... LOCAL");
  const host = hostPath(device.serial, remote);
  if (!existsSync(host)) {
    return fail(
      device.sdk >= 26
        ? `adb: error: failed to stat remote object '${remote}': No such file or directory`
        : `adb: error: remote object '${remote}' does not exist`,
    );
  }
  const started = Date.now();
  const name = basename(remote.replace(/\/+$/, ""));
  const into = existsSync(local) && statSync(local).isDirectory();
  const dest = into ? join(local, name) : local;
  const [files, bytes] = copyTree(host, dest);
  process.stdout.write(summary(remote, "pulled", files, bytes, started));
  return 0;
}

export function push(device, args) {
  const [local, remote] = args;
  if (remote === undefined) return fail("adb: usage: adb push [--sync] [-z ALGORITHM] [-Z] LOCAL... REMOTE");
  if (!existsSync(local)) return fail(`adb: error: cannot stat '${local}': No such file or directory`);
  const started = Date.now();
  let host = hostPath(device.serial, remote);
  if (remote.endsWith("/") || (existsSync(host) && statSync(host).isDirectory())) {
    host = join(host, basename(local.replace(/\/+$/, "")));
  }
  const [files, bytes] = copyTree(local, host);
  process.stdout.write(summary(local, "pushed", files, bytes, started));
  return 0;
}
