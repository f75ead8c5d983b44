/** Narrowing for values decoded by libraries that return untyped trees. */

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

export function arrayOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}
