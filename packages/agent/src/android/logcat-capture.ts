/**
 * The device log of a run: `logcat -c` clears what came before, then `logcat -v threadtime` follows the
 * log into a file until the run ends. The whole file is kept as an artifact, and each failed test gets the
 * part of it written while it ran (see logcat-cut.ts).
 */
import { createWriteStream } from "node:fs";
import type { Adb } from "./adb.ts";

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
  // No time limit of its own: it lives as long as the run, and stop() ends it.
  const following = adb.run(
    ["logcat", "-v", "threadtime"],
    24 * 3600 * 1000,
    (stream, line) => {
      if (stream !== "stdout") return;
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
      stop.abort();
      await following;
      await new Promise<void>((resolve) => out.end(resolve));
    },
  };
}
