/**
 * The `<manifest>` element's attributes from a compiled AndroidManifest.xml (Android binary XML, the format of
 * frameworks/base/libs/androidfw/include/androidfw/ResourceTypes.h: a string pool chunk, a resource map, then
 * XML node chunks). Only the first element is read: package, versionCode and versionName are on it.
 */
const chunk = { stringPool: 0x0001, xml: 0x0003, resourceMap: 0x0180, startElement: 0x0102 } as const;
const utf8Flag = 0x100;
/** Res_value data types. */
const valueType = { string: 0x03, intDec: 0x10, intHex: 0x11 } as const;
/** android:versionCode and android:versionName (public.xml), for manifests whose attribute names are stripped. */
const attributeIds: Record<number, string> = { 16843291: "versionCode", 16843292: "versionName" };

export interface ManifestHead {
  package: string | undefined;
  versionCode: number | undefined;
  versionName: string | undefined;
}

export function readManifestHead(xml: Buffer): ManifestHead {
  if (xml.length < 8 || xml.readUInt16LE(0) !== chunk.xml)
    throw new Error("AndroidManifest.xml is not binary XML");
  let strings: string[] = [];
  let resourceIds: number[] = [];
  let at = xml.readUInt16LE(2);
  while (at + 8 <= xml.length) {
    const type = xml.readUInt16LE(at);
    const headerSize = xml.readUInt16LE(at + 2);
    const size = xml.readUInt32LE(at + 4);
    if (size < 8 || at + size > xml.length) throw new Error("AndroidManifest.xml has a damaged chunk");
    if (type === chunk.stringPool) strings = stringPool(xml.subarray(at, at + size));
    else if (type === chunk.resourceMap) {
      resourceIds = [];
      for (let i = at + headerSize; i + 4 <= at + size; i += 4) resourceIds.push(xml.readUInt32LE(i));
    } else if (type === chunk.startElement) {
      return manifestAttributes(xml.subarray(at, at + size), headerSize, strings, resourceIds);
    }
    at += size;
  }
  throw new Error("AndroidManifest.xml has no element");
}

function stringPool(pool: Buffer): string[] {
  const count = pool.readUInt32LE(8);
  const utf8 = (pool.readUInt32LE(16) & utf8Flag) !== 0;
  const stringsStart = pool.readUInt32LE(20);
  const headerSize = pool.readUInt16LE(2);
  const strings: string[] = [];
  for (let i = 0; i < count; i++) {
    let at = stringsStart + pool.readUInt32LE(headerSize + i * 4);
    if (utf8) {
      // Two lengths, each 1 or 2 bytes: in UTF-16 units, then in bytes.
      at += (pool[at] ?? 0) & 0x80 ? 2 : 1;
      let length = pool[at] ?? 0;
      if (length & 0x80) {
        length = ((length & 0x7f) << 8) | (pool[at + 1] ?? 0);
        at += 2;
      } else at += 1;
      strings.push(pool.toString("utf8", at, at + length));
    } else {
      let length = pool.readUInt16LE(at);
      if (length & 0x8000) {
        length = ((length & 0x7fff) << 16) | pool.readUInt16LE(at + 2);
        at += 4;
      } else at += 2;
      strings.push(pool.toString("utf16le", at, at + length * 2));
    }
  }
  return strings;
}

function manifestAttributes(
  element: Buffer,
  headerSize: number,
  strings: string[],
  ids: number[],
): ManifestHead {
  const name = strings[element.readUInt32LE(headerSize + 4)];
  if (name !== "manifest") throw new Error(`AndroidManifest.xml starts with <${name}>, not <manifest>`);
  const attributeStart = element.readUInt16LE(headerSize + 8);
  const attributeSize = element.readUInt16LE(headerSize + 10);
  const attributeCount = element.readUInt16LE(headerSize + 12);
  const head: ManifestHead = { package: undefined, versionCode: undefined, versionName: undefined };
  for (let i = 0; i < attributeCount; i++) {
    const at = headerSize + attributeStart + i * attributeSize;
    const nameIndex = element.readUInt32LE(at + 4);
    const attribute = attributeIds[ids[nameIndex] ?? -1] ?? strings[nameIndex];
    const raw = element.readInt32LE(at + 8);
    const dataType = element.readUInt8(at + 15);
    const data = element.readUInt32LE(at + 16);
    const text = dataType === valueType.string ? strings[data] : raw >= 0 ? strings[raw] : undefined;
    if (attribute === "package") head.package = text;
    else if (attribute === "versionName")
      head.versionName = text ?? (dataType === valueType.intDec ? String(data) : undefined);
    else if (attribute === "versionCode") {
      head.versionCode =
        dataType === valueType.intDec || dataType === valueType.intHex
          ? data
          : text
            ? Number(text)
            : undefined;
    }
  }
  return head;
}
