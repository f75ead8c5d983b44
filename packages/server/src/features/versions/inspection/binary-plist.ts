/**
 * Reads chosen keys of the top-level dictionary of a binary plist (`bplist00`), the form Xcode ships in IPAs,
 * or (readBinaryPlistValue) the whole object graph under a budget, for an .xctestrun's nested targets.
 *
 * Not bplist-parser or plist's parseBinary: both decode the whole object graph recursively and expand shared
 * references, so a 193-byte plist whose arrays each point twice at the next one exhausts the heap and kills the
 * process (and a cycle overflows the stack). We need a handful of strings from the top dictionary, so we decode exactly those,
 * and every read is bounds-checked against the buffer.
 */

import { type PlistBudget, type PlistValue, spend, spendChars } from "./plist-budget.ts";
import type { PlistScalar } from "./plist-scalar.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

export const BINARY_PLIST_MAGIC = "bplist00";
const TRAILER_SIZE = 32;

/** Object type markers (high nibble). */
const INT = 0x1;
const ASCII_STRING = 0x5;
const UTF16_STRING = 0x6;
const ARRAY = 0xa;
const DICT = 0xd;

export function readBinaryPlistKeys(buffer: Buffer, keys: ReadonlySet<string>): Map<string, PlistScalar> {
  const plist = new BinaryPlist(buffer);
  const top = plist.objectAt(plist.topObject);
  if (plist.typeAt(top) !== DICT) throw invalid("its top level is not a dictionary");
  const { count, at: refsAt } = plist.lengthAt(top);
  if (refsAt + 2 * count * plist.refSize > plist.objectsEnd) {
    throw invalid("its top dictionary runs past its objects");
  }
  const longestKey = Math.max(...[...keys].map((key) => key.length));

  const found = new Map<string, PlistScalar>();
  for (let i = 0; i < count; i++) {
    const key = plist.stringAt(plist.refAt(refsAt, i), longestKey);
    if (key === null || !keys.has(key) || found.has(key)) continue;
    found.set(key, plist.scalarAt(plist.refAt(refsAt, count + i)));
  }
  return found;
}

/**
 * The whole plist as values, every object visited counted against `budget`: a graph that shares references
 * (each array pointing twice at the next) is paid for per path, so it runs out of budget instead of memory,
 * and one that contains itself runs out of depth.
 */
export function readBinaryPlistValue(buffer: Buffer, what: string, budget: PlistBudget): PlistValue {
  const plist = new BinaryPlist(buffer, what);
  return plist.valueAt(plist.topObject, budget, 0);
}

class BinaryPlist {
  readonly offsetSize: number;
  readonly refSize: number;
  readonly objectCount: number;
  readonly topObject: number;
  /** Where the offset table starts: objects live between the magic and it. */
  readonly objectsEnd: number;

  constructor(
    readonly buffer: Buffer,
    /** The file's name in messages ("Info.plist", "the .xctestrun"). */
    readonly what = "its Info.plist",
  ) {
    if (buffer.length < BINARY_PLIST_MAGIC.length + TRAILER_SIZE) throw this.invalid("it is too short");
    const trailer = buffer.length - TRAILER_SIZE;
    this.offsetSize = buffer.readUInt8(trailer + 6);
    this.refSize = buffer.readUInt8(trailer + 7);
    this.objectCount = this.uint(trailer + 8, 8);
    this.topObject = this.uint(trailer + 16, 8);
    this.objectsEnd = this.uint(trailer + 24, 8);
    if (
      !inRange(this.offsetSize, 1, 8) ||
      !inRange(this.refSize, 1, 8) ||
      this.topObject >= this.objectCount ||
      this.objectsEnd < BINARY_PLIST_MAGIC.length ||
      this.objectsEnd + this.objectCount * this.offsetSize > trailer
    ) {
      throw this.invalid("its trailer is malformed");
    }
  }

  /** Byte position of object number `ref`. */
  objectAt(ref: number): number {
    if (ref >= this.objectCount) throw this.invalid(`it refers to object ${ref} of ${this.objectCount}`);
    const at = this.uint(this.objectsEnd + ref * this.offsetSize, this.offsetSize);
    if (at < BINARY_PLIST_MAGIC.length || at >= this.objectsEnd) {
      throw this.invalid(`object ${ref} is out of place`);
    }
    return at;
  }

  /** The type marker (high nibble) of the object at `at`. */
  typeAt(at: number): number {
    return this.byte(at) >> 4;
  }

  /** The `index`th object reference in a list of references starting at `at`. */
  refAt(at: number, index: number): number {
    return this.uint(at + index * this.refSize, this.refSize);
  }

  /** The element count of the object at `at`, and where its payload starts. */
  lengthAt(at: number): { count: number; at: number } {
    const nibble = this.byte(at) & 0x0f;
    if (nibble !== 0x0f) return { count: nibble, at: at + 1 };
    // Longer lengths follow as an int object: marker 0x1N, then 2^N big-endian bytes.
    const marker = this.byte(at + 1);
    const width = 2 ** (marker & 0x0f);
    if (marker >> 4 !== INT || width > 8)
      throw this.invalid(`the object at byte ${at} has a malformed length`);
    return { count: this.uint(at + 2, width), at: at + 2 + width };
  }

  /** The string object `ref`, or null when it is no string or longer than `maxChars` (then it is not decoded). */
  stringAt(ref: number, maxChars = Number.POSITIVE_INFINITY): string | null {
    const at = this.objectAt(ref);
    const type = this.typeAt(at);
    if (type !== ASCII_STRING && type !== UTF16_STRING) return null;
    const { count, at: start } = this.lengthAt(at);
    if (count > maxChars) return null;
    const end = start + count * (type === UTF16_STRING ? 2 : 1);
    if (end > this.objectsEnd) throw this.invalid(`the string at byte ${at} runs past its objects`);
    const bytes = this.buffer.subarray(start, end);
    // UTF-16 strings are big-endian; Node decodes little-endian, so swap a copy.
    return type === ASCII_STRING ? bytes.toString("latin1") : Buffer.from(bytes).swap16().toString("utf16le");
  }

  /** A string, integer or boolean object; anything else (arrays, dates, data, …) is reported as null. */
  scalarAt(ref: number): PlistScalar {
    const at = this.objectAt(ref);
    const marker = this.byte(at);
    if (marker === 0x08 || marker === 0x09) return marker === 0x09;
    const type = marker >> 4;
    if (type === ASCII_STRING || type === UTF16_STRING) return this.stringAt(ref);
    if (type === INT) {
      const width = 2 ** (marker & 0x0f);
      if (width > 8) return null;
      if (at + 1 + width > this.objectsEnd)
        throw this.invalid(`the integer at byte ${at} runs past its objects`);
      // Only 8-byte integers are signed in a bplist.
      const value = width === 8 ? this.buffer.readBigInt64BE(at + 1) : BigInt(this.uint(at + 1, width));
      return value >= BigInt(Number.MIN_SAFE_INTEGER) && value <= BigInt(Number.MAX_SAFE_INTEGER)
        ? Number(value)
        : null;
    }
    return null;
  }

  /** Object `ref` and everything below it, as values; dates, data, reals and UIDs are null. */
  valueAt(ref: number, budget: PlistBudget, depth: number): PlistValue {
    spend(budget, depth, this.what);
    const at = this.objectAt(ref);
    const type = this.typeAt(at);
    if (type !== ARRAY && type !== DICT) {
      const value = this.scalarAt(ref);
      if (typeof value === "string") spendChars(budget, value.length, this.what);
      return value;
    }
    const { count, at: refsAt } = this.lengthAt(at);
    const refs = type === DICT ? 2 * count : count;
    if (refsAt + refs * this.refSize > this.objectsEnd) {
      throw this.invalid(`the ${type === DICT ? "dictionary" : "array"} at byte ${at} runs past its objects`);
    }
    if (type === ARRAY) {
      const items: PlistValue[] = [];
      for (let i = 0; i < count; i++) items.push(this.valueAt(this.refAt(refsAt, i), budget, depth + 1));
      return items;
    }
    const dict = new Map<string, PlistValue>();
    for (let i = 0; i < count; i++) {
      const key = this.stringAt(this.refAt(refsAt, i));
      if (key === null) throw this.invalid(`the dictionary at byte ${at} has a key that is not a string`);
      spendChars(budget, key.length, this.what);
      const value = this.valueAt(this.refAt(refsAt, count + i), budget, depth + 1);
      if (!dict.has(key)) dict.set(key, value);
    }
    return dict;
  }

  invalid(reason: string): UnsupportedBinaryError {
    return new UnsupportedBinaryError(`${this.what} is not a valid binary plist: ${reason}`);
  }

  private byte(at: number): number {
    const value = this.buffer[at];
    if (value === undefined) throw this.invalid(`it is cut off at byte ${at}`);
    return value;
  }

  /** Big-endian unsigned integer of `width` (1–8) bytes; larger than 2^53 is refused, not rounded. */
  private uint(at: number, width: number): number {
    if (at + width > this.buffer.length) throw this.invalid(`it is cut off at byte ${at}`);
    let value = 0;
    for (let i = 0; i < width; i++) value = value * 256 + this.byte(at + i);
    if (value > Number.MAX_SAFE_INTEGER) throw this.invalid(`a size at byte ${at} is too large`);
    return value;
  }
}

function inRange(value: number, min: number, max: number): boolean {
  return value >= min && value <= max;
}

function invalid(reason: string): UnsupportedBinaryError {
  return new UnsupportedBinaryError(`its Info.plist is not a valid binary plist: ${reason}`);
}
