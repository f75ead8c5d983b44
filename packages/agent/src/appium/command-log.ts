/**
 * A session's command log, the artifact `commands.jsonl` (API.md §12): one JSON line per relayed command,
 * `{at, method, path, status, ms}`, in the order the commands were answered. Bodies are never written: they hold
 * what the tests typed (passwords into login fields) and the page sources and screenshots Appium returned.
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

export class CommandLog {
  private readonly stream: WriteStream;
  private closed: Promise<void> | null = null;

  constructor(readonly file: string) {
    this.stream = createWriteStream(file, { flags: "a" });
    // A full disk must not take the agent down: the session goes on without its log.
    this.stream.on("error", () => {});
  }

  append(line: CommandLogLine): void {
    if (this.closed) return;
    this.stream.write(`${JSON.stringify(line)}\n`);
  }

  /** Flushes and closes the file; resolves once it is complete on disk. */
  close(): Promise<void> {
    this.closed ??= new Promise((resolve) => this.stream.end(resolve));
    return this.closed;
  }
}
