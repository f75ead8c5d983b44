/**
 * Turns a stream of text chunks into lines. Chunks from a pipe end anywhere, often mid-line, so the last
 * partial line is kept until its newline (or the end) arrives.
 */

/** Longest line passed on in one piece: a process printing megabytes without a newline must not be held. */
export const MAX_LINE_CHARS = 8 * 1024;

export class LineSplitter {
  private pending = "";
  private readonly emit: (line: string) => void;
  private readonly maxChars: number;

  constructor(emit: (line: string) => void, maxChars = MAX_LINE_CHARS) {
    this.emit = emit;
    this.maxChars = maxChars;
  }

  push(chunk: string): void {
    const parts = (this.pending + chunk).split("\n");
    this.pending = parts.pop() ?? "";
    for (const part of parts) this.emitCapped(part);
    // An over-long unfinished line is passed on in pieces rather than dropped: nothing printed is lost.
    while (this.pending.length > this.maxChars) {
      this.emit(this.pending.slice(0, this.maxChars));
      this.pending = this.pending.slice(this.maxChars);
    }
  }

  /** Passes on the last line when the stream ended without a newline. */
  end(): void {
    if (this.pending !== "") this.emitCapped(this.pending);
    this.pending = "";
  }

  private emitCapped(raw: string): void {
    // Older adb and Windows-built tools end lines with \r\n.
    const line = raw.endsWith("\r") ? raw.slice(0, -1) : raw;
    for (let start = 0; start < line.length || start === 0; start += this.maxChars) {
      this.emit(line.slice(start, start + this.maxChars));
    }
  }
}
