/**
 * The last lines a tool printed, kept while it runs: a managed device that ends `failed` shows them as its
 * `error` (API.md §13), since the tool's own last words say why far better than any summary of ours.
 */
export class LastLines {
  private readonly lines: string[] = [];
  private partial = "";

  constructor(private readonly keep = 20) {}

  /** Takes output as it comes, in chunks that need not end at a line break. */
  write(chunk: string | Buffer): void {
    const text = this.partial + chunk.toString();
    const parts = text.split(/\r?\n/);
    this.partial = parts.pop() ?? "";
    for (const line of parts) this.push(line);
  }

  private push(line: string): void {
    if (line.trim() === "") return;
    this.lines.push(line.trimEnd());
    if (this.lines.length > this.keep) this.lines.shift();
  }

  /** The kept lines (and an unfinished last one), at most `max` characters from the end. */
  text(max = 2000): string {
    const all = [...this.lines, ...(this.partial.trim() ? [this.partial.trimEnd()] : [])].join("\n");
    return all.length <= max ? all : all.slice(all.length - max);
  }
}
