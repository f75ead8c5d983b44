/**
 * A session's command log, the artifact `commands.jsonl` (API.md §12): one JSON line per relayed command,
 * `{at, method, path, status, ms}`, in the order the commands were answered. Bodies are never written: they hold
 * what the tests typed (passwords into login fields) and the page sources and screenshots Appium returned.
 *
 * Lines are gathered in memory and written at most once a second (and at close), not one file write per
 * command: each write is handed to libuv's thread pool, and handing it over took about 35 µs of a relayed
 * command's time on the agent here, of the 1 ms API.md §12 allows (bench/HISTORY.md, "appium"). The file is read
 * only once the session has ended (it is uploaded then), so nobody sees it a second behind; an agent killed
 * mid-session loses at most that last second of lines, with the session itself.
 */
import { createWriteStream, type WriteStream } from "node:fs";

export interface CommandLogLine {
  /** When the command arrived at the agent (ISO 8601). */
  at: string;
  method: string;
  /** Below `/session/{id}`, as relayed (`""` for the session itself). */
  path: string;
  status: number;
  /** From sending it to Appium to its answer, in milliseconds. */
  ms: number;
}

/** Written at once past this many characters, whatever the time: a burst of commands never piles up. */
const maxPendingChars = 64 * 1024;

export class CommandLog {
  private readonly stream: WriteStream;
  private pending = "";
  private flushTimer: NodeJS.Timeout | null = null;
  private closed: Promise<void> | null = null;

  constructor(
    readonly file: string,
    private readonly flushEveryMs = 1000,
  ) {
    this.stream = createWriteStream(file, { flags: "a" });
    // A full disk must not take the agent down: the session goes on without its log.
    this.stream.on("error", () => {});
  }

  append(line: CommandLogLine): void {
    if (this.closed) return;
    this.pending += `${JSON.stringify(line)}\n`;
    if (this.pending.length >= maxPendingChars) this.flush();
    else if (!this.flushTimer) {
      this.flushTimer = setTimeout(() => this.flush(), this.flushEveryMs);
      // Closing writes what is pending: the timer alone must not keep an exiting agent alive.
      this.flushTimer.unref();
    }
  }

  /** Writes what is pending and closes the file; resolves once it is complete on disk. */
  close(): Promise<void> {
    this.closed ??= new Promise((resolve) => {
      this.flush();
      this.stream.end(resolve);
    });
    return this.closed;
  }

  private flush(): void {
    if (this.flushTimer) clearTimeout(this.flushTimer);
    this.flushTimer = null;
    if (this.pending === "") return;
    this.stream.write(this.pending);
    this.pending = "";
  }
}
