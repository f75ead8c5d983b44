/**
 * Test helper: writes plists, binary (`bplist00`) and XML, from values, so tests can turn a recorded XML
 * .xctestrun into the binary form Xcode may also write (`plutil -convert binary1`) and build Info.plists for
 * the bundles a test package names. Objects are never shared; four-byte offsets and references.
 */
import type { PlistValue } from "./plist-value.ts";

export function binaryPlistOf(value: PlistValue): Buffer {
  const objects: Buffer[] = [];
  const add = (item: PlistValue): number => {
    const index = objects.length;
    objects.push(Buffer.alloc(0));
    objects[index] = encode(item, add);
    return index;
  };
  add(value);
  const offsets: number[] = [];
  let at = 8;
  for (const object of objects) {
    offsets.push(at);
    at += object.length;
  }
  const table = Buffer.alloc(offsets.length * 4);
  offsets.forEach((offset, i) => {
    table.writeUInt32BE(offset, i * 4);
  });
  const trailer = Buffer.alloc(32);
  trailer[6] = 4;
  trailer[7] = 4;
  trailer.writeBigUInt64BE(BigInt(objects.length), 8);
  trailer.writeBigUInt64BE(0n, 16);
  trailer.writeBigUInt64BE(BigInt(at), 24);
  return Buffer.concat([Buffer.from("bplist00"), ...objects, table, trailer]);
}

function encode(value: PlistValue, add: (item: PlistValue) => number): Buffer {
  if (value === null) return Buffer.from([0x00]);
  if (typeof value === "boolean") return Buffer.from([value ? 0x09 : 0x08]);
  if (typeof value === "number") {
    const int = Buffer.alloc(9);
    int[0] = 0x13;
    int.writeBigInt64BE(BigInt(value), 1);
    return int;
  }
  if (typeof value === "string") {
    const ascii = [...value].every((char) => char.charCodeAt(0) < 0x80);
    const body = ascii ? Buffer.from(value, "latin1") : Buffer.from(value, "utf16le").swap16();
    return Buffer.concat([lengthMarker(ascii ? 0x5 : 0x6, value.length), body]);
  }
  if (Array.isArray(value)) {
    const refs = value.map(add);
    return Buffer.concat([lengthMarker(0xa, refs.length), references(refs)]);
  }
  const keys = [...value.keys()].map((key) => add(key));
  const values = [...value.values()].map(add);
  return Buffer.concat([lengthMarker(0xd, keys.length), references(keys), references(values)]);
}

function lengthMarker(type: number, count: number): Buffer {
  if (count < 15) return Buffer.from([(type << 4) | count]);
  const length = Buffer.alloc(6);
  length[0] = (type << 4) | 0x0f;
  length[1] = 0x12;
  length.writeUInt32BE(count, 2);
  return length;
}

function references(refs: number[]): Buffer {
  const buffer = Buffer.alloc(refs.length * 4);
  refs.forEach((ref, i) => {
    buffer.writeUInt32BE(ref, i * 4);
  });
  return buffer;
}

/** An XML Info.plist with these string keys. */
export function xmlInfoPlist(values: Record<string, string>): Buffer {
  const xmlEscape = (text: string) => text.replaceAll("&", "&amp;").replaceAll("<", "&lt;");
  const items = Object.entries(values)
    .map(([key, value]) => `  <key>${xmlEscape(key)}</key>\n  <string>${xmlEscape(value)}</string>\n`)
    .join("");
  return Buffer.from(
    `<?xml version="1.0" encoding="UTF-8"?>\n<plist version="1.0">\n<dict>\n${items}</dict>\n</plist>\n`,
  );
}
