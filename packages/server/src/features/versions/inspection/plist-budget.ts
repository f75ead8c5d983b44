/**
 * Bounds on reading a whole plist. The bytes come from uploads: how deep it nests, how many objects and how
 * many characters of strings it yields are all counted, because a binary plist can share references (one
 * array listed twice by the next, 40 times over), which a plain reader expands into 2^40 objects.
 */
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

/** Dictionaries are Maps, so a key such as `__proto__` is only a key. */
export type PlistValue = string | number | boolean | null | PlistValue[] | Map<string, PlistValue>;

/** What a plist may still cost while it is read. */
export interface PlistBudget {
  objects: number;
  chars: number;
}

/** Real .xctestrun files nest 6 deep and hold a few thousand objects and ~100 K characters. */
export const PLIST_MAX_DEPTH = 32;
export const PLIST_MAX_OBJECTS = 200_000;
export const PLIST_MAX_CHARS = 16 * 1024 * 1024;

/** Counts one object at `depth`; refuses once the plist has cost too much. */
export function spend(budget: PlistBudget, depth: number, what: string): void {
  if (depth > PLIST_MAX_DEPTH) {
    throw new UnsupportedBinaryError(`${what} nests deeper than the ${PLIST_MAX_DEPTH} levels we read`);
  }
  if (--budget.objects < 0) {
    throw new UnsupportedBinaryError(`${what} holds more than the ${PLIST_MAX_OBJECTS} objects we read`);
  }
}

/** Counts the characters of a string just read. */
export function spendChars(budget: PlistBudget, chars: number, what: string): void {
  budget.chars -= chars;
  if (budget.chars < 0) {
    throw new UnsupportedBinaryError(`${what} holds more than the ${PLIST_MAX_CHARS} characters we read`);
  }
}
