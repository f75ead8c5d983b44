/**
 * A plist read whole (an .xctestrun: targets nested in dictionaries and arrays), in either encoding, under
 * the bounds of plist-budget.ts.
 */
import { BINARY_PLIST_MAGIC, readBinaryPlistValue } from "./binary-plist.ts";
import { PLIST_MAX_CHARS, PLIST_MAX_OBJECTS, type PlistBudget, type PlistValue } from "./plist-budget.ts";
import { readXmlPlistValue } from "./xml-plist.ts";

export type { PlistValue } from "./plist-budget.ts";

/** The whole plist in `buffer`, binary (`bplist00`) or XML; `what` names it in messages ("the .xctestrun"). */
export function readPlistValue(buffer: Buffer, what: string): PlistValue {
  const budget: PlistBudget = { objects: PLIST_MAX_OBJECTS, chars: PLIST_MAX_CHARS };
  const binary = buffer.subarray(0, BINARY_PLIST_MAGIC.length).toString("latin1") === BINARY_PLIST_MAGIC;
  return binary ? readBinaryPlistValue(buffer, what, budget) : readXmlPlistValue(buffer, what, budget);
}

export function isDict(value: PlistValue | undefined): value is Map<string, PlistValue> {
  return value instanceof Map;
}
