/**
 * The device log of a run: `logcat -c` clears what came before, then `logcat -v threadtime` follows the
 * log into a file until the run ends. The whole file is kept as an artifact, and each failed test gets the
 * part of it written while it ran (see logcat-cut.ts).
 */
import { randomUUID } from "node:crypto";
import { createWriteStream } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import type { Adb } from "./adb.ts";

/** How long stop() waits for the device log to catch up before it stops following anyway. */
const catchUpMs = 5000;

export interface LogcatCapture {
  /** Stops following and closes the file; resolves once every line received is written. */
  stop(): Promise<void>;
  /** Lines written so far. */
  readonly lineCount: number;
}

export async function startLogcat(adb: Adb, file: string): Promise<LogcatCapture> {
  await adb.run(["logcat", "-c"], 15_000);
  const out = createWriteStream(file, { mode: 0o600 });
  const stop = new AbortController();
  let lineCount = 0;
  let endMarker: { text: string; seen: () => void } | undefined;
  // No time limit of its own: it lives as long as the run, and stop() ends it.
  const following = adb.run(
    ["logcat", "-v", "threadtime"],
    24 * 3600 * 1000,
    (stream, line) => {
      if (stream !== "stdout") return;
      if (endMarker && line.includes(endMarker.text)) {
        endMarker.seen();
        return;
      }
      lineCount++;
      out.write(`${line}\n`);
    },
    stop.signal,
  );
  return {
    get lineCount() {
      return lineCount;
    },
    async stop() {
      // The last lines the device logged (a rerun's, a crash's) may still be on their way to us: log a marker
      // and follow until it comes back, so the file holds everything logged before the stop. A device that is
      // gone answers at once and nothing is waited for.
      const text = `testbay-capture-end-${randomUUID()}`;
      const seen = new Promise<void>((resolve) => {
        endMarker = { text, seen: resolve };
      });
      const marked = await adb.shell(`log -t TestbayAgent ${text}`, 15_000);
      if (marked.ok) {
        const waited = new AbortController();
        const giveUp = delay(catchUpMs, undefined, { signal: waited.signal }).catch(() => {});
        await Promise.race([seen, giveUp]);
        waited.abort();
      }
      stop.abort();
      await following;
      await new Promise<void>((resolve) => out.end(resolve));
    },
  };
}
