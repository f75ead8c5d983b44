import { type Document, isMap, isScalar, isSeq, type LineCounter, type Node } from "yaml";

/** Where something is in the file, 1-based, as editors and CI problem matchers read `FILE:LINE:COL`. */
export interface Position {
  line: number;
  col: number;
}

/** `/plans/0/steps/1` → ["plans", "0", "steps", "1"] (JSON Pointer, as Ajv and the server's errors write paths). */
export function pointerSegments(pointer: string): string[] {
  if (pointer === "" || pointer === "/") return [];
  return pointer
    .replace(/^\//, "")
    .split("/")
    .map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"));
}

/** ["plans", "0", "steps", "1", "type"] → `plans[0].steps[1].type`: how a person names a place in the file. */
export function displayPath(segments: string[]): string {
  let out = "";
  for (const segment of segments) {
    if (/^\d+$/.test(segment)) out += `[${segment}]`;
    else out += out ? `.${segment}` : segment;
  }
  return out;
}

/**
 * The position of the node at `segments`; with `key`, of the last segment's key rather than its value (an
 * unknown key is where the mistake is). A path that leads nowhere (a missing key) ends at the deepest node
 * that exists, so every error still points into the file.
 */
export function locate(
  document: Document,
  lines: LineCounter,
  segments: string[],
  options: { key?: boolean } = {},
): Position {
  let node: unknown = document.contents;
  let at = rangeStart(node) ?? 0;
  for (const [i, segment] of segments.entries()) {
    const last = i === segments.length - 1;
    let next: unknown;
    if (isMap(node)) {
      const pair = node.items.find((p) => (isScalar(p.key) ? String(p.key.value) : p.key) === segment);
      if (!pair) break;
      if (last && options.key) {
        at = rangeStart(pair.key) ?? at;
        break;
      }
      // `key:` with nothing after it has no value node: the key is the place.
      next = pair.value ?? pair.key;
    } else if (isSeq(node)) {
      next = node.items[Number(segment)];
    }
    const start = rangeStart(next);
    if (start === undefined) break;
    node = next;
    at = start;
  }
  const { line, col } = lines.linePos(at);
  return { line, col };
}

function rangeStart(node: unknown): number | undefined {
  return (node as Node | undefined)?.range?.[0];
}
