import type { SeededRandom } from "./seeded-random.ts";

/** Text no database can store (API.md §2): what every client-facing field must refuse with a 400. */
export const unstorableStrings = ["a\u0000b", "\u0000", "x\ud800y", "\udfff", "\ud83d"] as const;

/** Strings that have broken parsers, paths and queries elsewhere. */
export const hostileStrings: readonly string[] = [
  ...unstorableStrings,
  "",
  " ",
  "../../../../etc/passwd",
  "..\\..\\windows\\win.ini",
  "..",
  ".",
  "/",
  "a/../../b",
  "%2e%2e%2f",
  "%00",
  "%",
  "\r\nx-injected: 1",
  "\u202egnp.exe",
  "😀".repeat(50),
  "é".normalize("NFD"),
  "A".repeat(5000),
  "' OR '1'='1",
  '"; DROP TABLE apps; --',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a log-injection probe, meant literally
  "${jndi:ldap://127.0.0.1/a}",
  "<script>alert(1)</script>",
  "__proto__",
  "constructor",
  "null",
  "-1",
  "1e309",
  "0x7fffffff",
  "CON",
  "tp_",
  "ex_00000000000000000000000000",
  "\t",
  "\u00ff\u00fe",
];

/** Values of every JSON type that a field of another type should refuse. */
export const hostileJsonValues: readonly unknown[] = [
  null,
  true,
  0,
  -1,
  1.5,
  2 ** 53 + 1,
  1e308,
  -1e308,
  "5",
  [],
  [null],
  {},
  "x".repeat(100_000),
  // Nested deeper than a recursive walk of the parsed body survives.
  JSON.parse(`${"[".repeat(5000)}${"]".repeat(5000)}`),
  JSON.parse(`${'{"a":'.repeat(5000)}1${"}".repeat(5000)}`),
];

/** Raw path segments: percent-encodings the router and decoders must survive. */
export const hostilePathSegments: readonly string[] = [
  "%00",
  "a%00b",
  "%ED%A0%80", // U+D800 as (invalid) UTF-8
  "%FF%FE",
  "%C0%AE%C0%AE", // overlong "."
  "..%2F..%2Fetc%2Fpasswd",
  "%2e%2e",
  "..",
  "%",
  "%zz",
  "a%2Fb",
  "%E2%80%AE",
  "x".repeat(3000),
  "%F0%9F%98%80",
  "tp_%0d%0aX-Injected:%201",
];

/** Bodies that are not the JSON they claim to be. */
export const malformedJsonBodies: readonly string[] = [
  "",
  "{",
  '{"a":',
  "{}garbage",
  "[1,2",
  "nul",
  '{"a":"\\ud800"}',
  '{"a":"\\u0000"}',
  '{"\\u0000":1}',
  "\ufeff{}",
  '{"__proto__":{"admin":true}}',
  '{"constructor":{"prototype":{"admin":true}}}',
  `${"[".repeat(5000)}${"]".repeat(5000)}`,
  `{"a":${"1".repeat(400)}}`,
  '{"a":1,"a":2}',
  "\u0000",
];

/** A copy of `value` with one leaf (picked at random) replaced by `replacement`. */
export function replaceRandomLeaf(value: unknown, replacement: unknown, random: SeededRandom): unknown {
  const leaves = leafPaths(value);
  if (leaves.length === 0) return replacement;
  return replaceAt(value, random.pick(leaves), replacement);
}

/** Paths (as key lists) of every string leaf in `value`. */
export function stringLeafPaths(value: unknown): Array<Array<string | number>> {
  return leafPaths(value).filter((path) => typeof getAt(value, path) === "string");
}

function leafPaths(value: unknown, prefix: Array<string | number> = []): Array<Array<string | number>> {
  if (Array.isArray(value)) return value.flatMap((item, i) => leafPaths(item, [...prefix, i]));
  if (value !== null && typeof value === "object") {
    return Object.entries(value).flatMap(([key, item]) => leafPaths(item, [...prefix, key]));
  }
  return [prefix];
}

function getAt(value: unknown, path: Array<string | number>): unknown {
  let current = value;
  for (const key of path) current = (current as Record<string | number, unknown>)[key];
  return current;
}

/** A copy of `value` with the leaf at `path` replaced. */
export function replaceAt(value: unknown, path: Array<string | number>, replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const [head, ...rest] = path as [string | number, ...Array<string | number>];
  if (Array.isArray(value)) {
    return value.map((item, i) => (i === head ? replaceAt(item, rest, replacement) : item));
  }
  const record = value as Record<string, unknown>;
  return { ...record, [head]: replaceAt(record[head], rest, replacement) };
}
