import type { FlankFile, FlankIssue, FlankValue } from "./flank-file.ts";

/**
 * What each part of the conversion reads and reports into: the file, and the errors (values Testbay cannot
 * run) and warnings (values it runs differently) found, each at its line.
 */
export class ConversionContext {
  readonly errors: FlankIssue[] = [];
  readonly warnings: FlankIssue[] = [];

  constructor(
    readonly file: FlankFile,
    /** The environment `$NAME` test targets are read from (Flank's own rule: test-targets.ts). */
    readonly env: Record<string, string | undefined> = {},
  ) {}

  gcloud(key: string): FlankValue | undefined {
    return this.file.gcloud.get(key);
  }

  flank(key: string): FlankValue | undefined {
    return this.file.flank.get(key);
  }

  /** An error about `value` (or one of its items, by `more` segments), at that place in the file. */
  error(value: FlankValue, message: string, more: string[] = []): void {
    this.errors.push({ ...this.file.at([...value.segments, ...more]), message });
  }

  /** A warning at the key it is about (the key of `more`, when given). */
  warn(value: FlankValue, message: string, more: string[] = []): void {
    this.warnings.push({
      ...this.file.at([...value.segments, ...more], { key: true }),
      message,
    });
  }
}

/** A list the way Flank takes one: a YAML list, or one value (gcloud also splits `a,b` for some keys). */
export function listOf(value: unknown, { commas }: { commas: boolean }): unknown[] {
  if (value === null || value === undefined) return [];
  if (Array.isArray(value)) return value;
  if (commas && typeof value === "string") return value.split(",").map((part) => part.trim());
  return [value];
}
