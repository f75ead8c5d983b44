/**
 * A screenshot of the device as it is now: `adb exec-out screencap -p` writes a PNG to stdout (exec-out,
 * not shell, because a shell's pty would turn its "\n" bytes into "\r\n"). Kept only when what arrived is a
 * PNG: a device that refuses (a secure window, a device going away) prints an error instead.
 */
import { mkdir, open, rm } from "node:fs/promises";
import path from "node:path";
import type { Adb } from "./adb.ts";

const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

export async function takeScreenshot(adb: Adb, file: string, timeoutMs = 30_000): Promise<boolean> {
  await mkdir(path.dirname(file), { recursive: true });
  const taken = await adb.toFile(["exec-out", "screencap", "-p"], file, timeoutMs);
  if (taken.ok && (await startsWithPng(file))) return true;
  await rm(file, { force: true });
  return false;
}

async function startsWithPng(file: string): Promise<boolean> {
  const handle = await open(file, "r");
  try {
    const head = Buffer.alloc(pngSignature.length);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    return bytesRead === head.length && head.equals(pngSignature);
  } finally {
    await handle.close();
  }
}
