// The device's log buffer: an append-only file of threadtime lines, plus the byte offset where
// `logcat -c` last cleared it (the file itself is never truncated, so a follower that is reading
// while another process clears keeps a valid offset).
// Line format from system/logging/liblog logprint.c (FORMAT_THREADTIME):
//   "MM-DD HH:MM:SS.mmm  PID  TID L TAG     : message" (pid/tid %5d, tag padded to 8).
import { closeSync, openSync, readSync, statSync } from "node:fs";
import { appendLine, paths, readJson, watchAttached, writeJson } from "./state.mjs";

function pad(n, width = 2) {
  return String(n).padStart(width, "0");
}

export function threadtime(date, pid, tid, level, tag, message) {
  const stamp = `${pad(date.getMonth() + 1)}-${pad(date.getDate())} ${pad(date.getHours())}:${pad(
    date.getMinutes(),
  )}:${pad(date.getSeconds())}.${pad(date.getMilliseconds(), 3)}`;
  return `${stamp} ${String(pid).padStart(5)} ${String(tid).padStart(5)} ${level} ${tag.padEnd(8)}: ${message}`;
}

/** Appends lines written by process `pid` now. */
export function log(serial, pid, tid, level, tag, messages) {
  const now = new Date();
  for (const message of Array.isArray(messages) ? messages : [messages]) {
    appendLine(paths.logcat(serial), threadtime(now, pid, tid, level, tag, message));
  }
}

function size(file) {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export function clear(serial) {
  writeJson(paths.logcatStart(serial), { offset: size(paths.logcat(serial)) });
}

function readFrom(file, offset) {
  const end = size(file);
  if (end <= offset) return { text: "", next: offset };
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(end - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    // Only whole lines: a writer may be half-way through one.
    const lastNewline = buffer.lastIndexOf(10);
    if (lastNewline < 0) return { text: "", next: offset };
    return { text: buffer.subarray(0, lastNewline + 1).toString("utf8"), next: offset + lastNewline + 1 };
  } finally {
    closeSync(fd);
  }
}

/**
 * `logcat [-d]`: prints the buffer since the last clear; without -d keeps following until the
 * client is killed or the device goes away (then it ends as a dropped adb connection does).
 */
export function dump(serial, { follow, onGone }) {
  const file = paths.logcat(serial);
  let offset = readJson(paths.logcatStart(serial), { offset: 0 }).offset;
  const first = readFrom(file, offset);
  process.stdout.write(first.text);
  offset = first.next;
  if (!follow) return;
  const timer = setInterval(() => {
    const next = readFrom(file, offset);
    if (next.text) process.stdout.write(next.text);
    offset = next.next;
  }, 15);
  watchAttached(serial, () => {
    clearInterval(timer);
    onGone();
  });
}
