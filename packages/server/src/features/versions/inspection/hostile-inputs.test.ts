/**
 * Crafted manifests and plists that make naive parsers hang or run out of memory. Each of these was checked
 * against the library it guards: adbkit-apkreader's parser loops forever on the zero-sized chunk and dies of
 * heap exhaustion on the string pool; bplist-parser dies of heap exhaustion on the 193-byte shared-reference
 * plist. Here each must end quickly, as UnsupportedBinaryError or as a correct answer.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type BinaryMetadata, inspectBinary, UnsupportedBinaryError } from "./index.ts";
import { makeTestZip, type TestZipEntry } from "./make-test-zip.ts";

let scratch: string;
beforeAll(async () => {
  scratch = await mkdtemp(join(tmpdir(), "testbay-hostile-"));
});
afterAll(async () => {
  await rm(scratch, { recursive: true, force: true });
});

let files = 0;
async function inspectZip(entries: TestZipEntry[]): Promise<BinaryMetadata> {
  const path = join(scratch, `upload-${++files}`);
  await writeFile(path, makeTestZip(entries));
  return inspectBinary(path);
}

const apk = (manifest: Buffer) =>
  inspectZip([
    { name: "AndroidManifest.xml", data: manifest },
    { name: "classes.dex", data: Buffer.alloc(8) },
  ]);
const ipa = (plist: Buffer) => inspectZip([{ name: "Payload/X.app/Info.plist", data: plist }]);

/** A binary XML document: the RES_XML_TYPE header around the given chunks. */
function binaryXml(...chunks: Buffer[]): Buffer {
  const header = Buffer.alloc(8);
  header.writeUInt16LE(0x0003, 0);
  header.writeUInt16LE(8, 2);
  header.writeUInt32LE(8 + chunks.reduce((sum, chunk) => sum + chunk.length, 0), 4);
  return Buffer.concat([header, ...chunks]);
}

function chunk(type: number, headerSize: number, size: number, body = Buffer.alloc(0)): Buffer {
  const head = Buffer.alloc(8);
  head.writeUInt16LE(type, 0);
  head.writeUInt16LE(headerSize, 2);
  head.writeUInt32LE(size, 4);
  return Buffer.concat([head, body]);
}

describe("hostile APK manifests", () => {
  it("refuses a chunk of size 0, which would never advance the parser", async () => {
    const namespace = chunk(0x0100, 16, 0, Buffer.alloc(16));
    await expect(apk(binaryXml(namespace))).rejects.toThrow(/chunk at byte 8 has impossible sizes/);
  });

  it("refuses a string pool whose 100,000 offsets all point at one 60 KB string", async () => {
    const count = 100_000;
    const units = 30_000;
    const stringsStart = 28 + count * 4;
    const size = stringsStart + 2 + units * 2 + 2;
    const body = Buffer.alloc(size - 8);
    body.writeUInt32LE(count, 0);
    body.writeUInt32LE(stringsStart, 12); // UTF-16, every offset 0
    body.writeUInt16LE(units, stringsStart - 8);
    await expect(apk(binaryXml(chunk(0x0001, 28, size, body)))).rejects.toThrow(
      /strings add up to more than/,
    );
  });

  it("refuses an element that claims more attributes than it holds", async () => {
    const ext = Buffer.alloc(8 + 20);
    ext.writeUInt16LE(20, 8 + 8); // attributeStart
    ext.writeUInt16LE(20, 8 + 10); // attributeSize
    ext.writeUInt16LE(65_535, 8 + 12); // attributeCount
    await expect(apk(binaryXml(chunk(0x0102, 16, 36, ext)))).rejects.toThrow(/claims more attributes/);
  });

  it("refuses two AndroidManifest.xml entries", async () => {
    const manifest = { name: "AndroidManifest.xml", data: binaryXml() };
    await expect(inspectZip([manifest, manifest])).rejects.toThrow(/holds AndroidManifest.xml twice/);
  });
});

describe("hostile AAB manifests", () => {
  it("refuses 200,000 nested elements without overflowing the stack", async () => {
    // XmlNode{element=1: XmlElement{child=5: XmlNode{…}}}, built from the inside out.
    const parts: Buffer[] = [];
    let length = 0;
    for (let depth = 0; depth < 200_000; depth++) {
      for (const field of [5, 1]) {
        const header = Buffer.from([(field << 3) | 2, ...varint(length)]);
        parts.push(header);
        length += header.length;
      }
    }
    const manifest = Buffer.concat(parts.reverse());
    const result = inspectZip([{ name: "base/manifest/AndroidManifest.xml", data: manifest }]);
    await expect(result).rejects.toThrow(UnsupportedBinaryError);
  });
});

describe("hostile Info.plists", () => {
  it("reads a binary plist whose arrays each point twice at the next (2^40 paths) at once", async () => {
    // CFBundleName's value is object 4, the head of the chain: object 4 + i is [5 + i, 5 + i].
    const objects = [
      dict([
        [1, 2],
        [3, 4],
      ]),
      ascii("CFBundleIdentifier"),
      ascii("com.example.dag"),
      ascii("CFBundleName"),
    ];
    for (let i = 0; i < 40; i++) objects.push(Buffer.from([0xa2, 5 + i, 5 + i]));
    objects.push(ascii("end"));
    const metadata = await ipa(binaryPlist(objects));
    expect(metadata).toMatchObject({ package_name: "com.example.dag", display_name: null });
  });

  it("reads a binary plist whose dictionary contains itself", async () => {
    const objects = [
      dict([
        [1, 2],
        [3, 0],
      ]),
      ascii("CFBundleIdentifier"),
      ascii("com.example.cycle"),
      ascii("CFBundleName"),
    ];
    expect(await ipa(binaryPlist(objects))).toMatchObject({ package_name: "com.example.cycle" });
  });

  it("refuses an XML plist that declares an entity bomb", async () => {
    const lol = Array.from({ length: 10 }, () => "&lol;").join("");
    const plist = `<?xml version="1.0"?>
<!DOCTYPE plist [<!ENTITY lol "lol"><!ENTITY lol2 "${lol}${lol}${lol}">]>
<plist version="1.0"><dict><key>CFBundleIdentifier</key><string>&lol2;</string></dict></plist>`;
    await expect(ipa(Buffer.from(plist))).rejects.toThrow(/not well-formed XML/);
  });

  it("reads the top dictionary of an XML plist with 50,000 nested arrays below it", async () => {
    const deep = `${"<array>".repeat(50_000)}${"</array>".repeat(50_000)}`;
    const plist = `<plist><dict><key>CFBundleIdentifier</key><string>com.example.deep</string>
<key>Deep</key>${deep}</dict></plist>`;
    const result = await ipa(Buffer.from(plist)).catch((error: unknown) => error);
    // Either answer is fine, as long as it is one of these two and not a crash.
    if (result instanceof Error) expect(result).toBeInstanceOf(UnsupportedBinaryError);
    else expect(result).toMatchObject({ package_name: "com.example.deep" });
  });
});

function varint(value: number): number[] {
  const bytes: number[] = [];
  let rest = value;
  while (rest >= 0x80) {
    bytes.push((rest & 0x7f) | 0x80);
    rest = Math.floor(rest / 0x80);
  }
  bytes.push(rest);
  return bytes;
}

function ascii(text: string): Buffer {
  if (text.length >= 15) return Buffer.concat([Buffer.from([0x5f, 0x10, text.length]), Buffer.from(text)]);
  return Buffer.concat([Buffer.from([0x50 | text.length]), Buffer.from(text)]);
}

/** A dictionary object of [keyRef, valueRef] pairs (one-byte references). */
function dict(pairs: [number, number][]): Buffer {
  return Buffer.from([0xd0 | pairs.length, ...pairs.map(([key]) => key), ...pairs.map(([, value]) => value)]);
}

/** A bplist00 file of the given objects, object 0 at the top, with two-byte offsets and one-byte references. */
function binaryPlist(objects: Buffer[]): Buffer {
  const offsets: number[] = [];
  let body = Buffer.from("bplist00");
  for (const object of objects) {
    offsets.push(body.length);
    body = Buffer.concat([body, object]);
  }
  const table = Buffer.alloc(offsets.length * 2);
  offsets.forEach((offset, i) => {
    table.writeUInt16BE(offset, i * 2);
  });
  const trailer = Buffer.alloc(32);
  trailer[6] = 2;
  trailer[7] = 1;
  trailer.writeBigUInt64BE(BigInt(objects.length), 8);
  trailer.writeBigUInt64BE(0n, 16);
  trailer.writeBigUInt64BE(BigInt(body.length), 24);
  return Buffer.concat([body, table, trailer]);
}
