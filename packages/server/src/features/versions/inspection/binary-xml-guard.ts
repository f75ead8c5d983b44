/**
 * Checks the chunk structure of an APK's binary AndroidManifest.xml before adbkit-apkreader's parser sees it.
 *
 * That parser trusts every size it reads. On crafted input it loops forever (a chunk of size 0 never advances
 * the cursor), or runs out of memory (a string table whose offsets all point at one long string, an element
 * that claims 65,535 attributes and re-reads the bytes after it for each). The checks below are the ones
 * Android itself makes in ResXMLTree (chunks fit inside their parent, attributes fit inside their element),
 * plus the fixed header and attribute layouts the parser assumes (the ones aapt and aapt2 always write), so
 * every loop in it is bounded by the manifest's size.
 */
import { MAX_MANIFEST_BYTES } from "./limits.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

const RES_STRING_POOL_TYPE = 0x0001;
const RES_XML_TYPE = 0x0003;
const RES_XML_FIRST_NODE_TYPE = 0x0100;
const RES_XML_START_ELEMENT_TYPE = 0x0102;
const RES_XML_LAST_NODE_TYPE = 0x0104;

const CHUNK_HEADER_SIZE = 8;
/** ResStringPool_header: chunk header + 5 × uint32. The parser reads the offset table right after it. */
const STRING_POOL_HEADER_SIZE = 28;
/** ResXMLTree_node (chunk header + line + comment): the parser assumes this header size for every node. */
const XML_NODE_HEADER_SIZE = 16;
/** ResXMLTree_attrExt, and the size of one ResXMLTree_attribute: the parser assumes both are 20. */
const ATTR_EXT_SIZE = 20;
const ATTRIBUTE_SIZE = 20;
const UTF8_FLAG = 1 << 8;

/**
 * Decoded strings may exceed the pool's own bytes only if offsets share one string; real pools never do, so the
 * whole manifest size is a generous bound on what the parser may allocate for them.
 */
const MAX_STRING_BYTES = MAX_MANIFEST_BYTES;

/** Returns the bytes of the document chunk (trailing bytes after it are ignored, as Android does). */
export function boundedBinaryXml(buffer: Buffer): Buffer {
  if (buffer.length < CHUNK_HEADER_SIZE || buffer.readUInt16LE(0) !== RES_XML_TYPE) {
    throw invalid("it does not start with an XML chunk");
  }
  const headerSize = buffer.readUInt16LE(2);
  const size = buffer.readUInt32LE(4);
  if (headerSize !== CHUNK_HEADER_SIZE || size < headerSize) {
    throw invalid("its XML chunk header is malformed");
  }
  if (size > buffer.length) throw invalid(`it is truncated (${buffer.length} of ${size} bytes)`);
  const xml = buffer.subarray(0, size);

  // Every chunk is at least CHUNK_HEADER_SIZE long, so this walk (and the parser's, which follows the same
  // sizes) always moves forward.
  for (let offset = CHUNK_HEADER_SIZE; offset < xml.length; ) {
    if (offset + CHUNK_HEADER_SIZE > xml.length) throw invalid(`a chunk header at byte ${offset} is cut off`);
    const type = xml.readUInt16LE(offset);
    const chunkHeaderSize = xml.readUInt16LE(offset + 2);
    const chunkSize = xml.readUInt32LE(offset + 4);
    if (
      chunkHeaderSize < CHUNK_HEADER_SIZE ||
      chunkSize < chunkHeaderSize ||
      offset + chunkSize > xml.length
    ) {
      throw invalid(`the chunk at byte ${offset} has impossible sizes`);
    }
    if (type === RES_STRING_POOL_TYPE) checkStringPool(xml, offset, chunkSize);
    const isNode = type >= RES_XML_FIRST_NODE_TYPE && type <= RES_XML_LAST_NODE_TYPE;
    if (isNode && chunkHeaderSize !== XML_NODE_HEADER_SIZE) {
      throw invalid(`the XML node at byte ${offset} has an unusual header`);
    }
    if (type === RES_XML_START_ELEMENT_TYPE) checkStartElement(xml, offset, chunkSize);
    offset += chunkSize;
  }
  return xml;
}

function checkStringPool(xml: Buffer, start: number, size: number): void {
  if (size < STRING_POOL_HEADER_SIZE) throw invalid(`the string pool at byte ${start} is too small`);
  const count = xml.readUInt32LE(start + 8);
  const flags = xml.readUInt32LE(start + 16);
  const stringsStart = start + xml.readUInt32LE(start + 20);
  if (STRING_POOL_HEADER_SIZE + count * 4 > size) throw invalid("its string pool offsets run past the pool");
  const utf8 = (flags & UTF8_FLAG) !== 0;
  let total = 0;
  for (let i = 0; i < count; i++) {
    const at = stringsStart + xml.readUInt32LE(start + STRING_POOL_HEADER_SIZE + i * 4);
    const bytes = utf8 ? utf8StringBytes(xml, at) : utf16StringBytes(xml, at);
    if (bytes === null) throw invalid(`string ${i} lies outside the manifest`);
    total += bytes;
    if (total > MAX_STRING_BYTES) throw invalid(`its strings add up to more than ${MAX_STRING_BYTES} bytes`);
  }
}

/** Byte length of the UTF-8 string at `at` (two length prefixes: characters, then bytes), if it fits. */
function utf8StringBytes(xml: Buffer, at: number): number | null {
  const chars = length8(xml, at);
  if (!chars) return null;
  const bytes = length8(xml, at + chars.width);
  if (!bytes) return null;
  const end = at + chars.width + bytes.width + bytes.value;
  return end < xml.length ? bytes.value : null;
}

/** Byte length of the UTF-16 string at `at` (one length prefix, in code units), if it fits. */
function utf16StringBytes(xml: Buffer, at: number): number | null {
  if (at + 2 > xml.length) return null;
  let units = xml.readUInt16LE(at);
  let width = 2;
  if (units & 0x8000) {
    if (at + 4 > xml.length) return null;
    units = ((units & 0x7fff) << 16) + xml.readUInt16LE(at + 2);
    width = 4;
  }
  const end = at + width + units * 2;
  return end + 2 <= xml.length ? units * 2 : null;
}

function length8(xml: Buffer, at: number): { value: number; width: number } | null {
  const first = xml[at];
  if (first === undefined) return null;
  if (!(first & 0x80)) return { value: first, width: 1 };
  const second = xml[at + 1];
  if (second === undefined) return null;
  return { value: ((first & 0x7f) << 8) + second, width: 2 };
}

function checkStartElement(xml: Buffer, start: number, size: number): void {
  const ext = start + XML_NODE_HEADER_SIZE;
  if (size < XML_NODE_HEADER_SIZE + ATTR_EXT_SIZE) throw invalid(`the element at byte ${start} is too small`);
  const attributeStart = xml.readUInt16LE(ext + 8);
  const attributeSize = xml.readUInt16LE(ext + 10);
  const attributeCount = xml.readUInt16LE(ext + 12);
  if (attributeStart !== ATTR_EXT_SIZE || attributeSize !== ATTRIBUTE_SIZE) {
    throw invalid(`the element at byte ${start} has an unusual attribute layout`);
  }
  if (XML_NODE_HEADER_SIZE + ATTR_EXT_SIZE + attributeCount * ATTRIBUTE_SIZE > size) {
    throw invalid(`the element at byte ${start} claims more attributes than it holds`);
  }
}

function invalid(reason: string): UnsupportedBinaryError {
  return new UnsupportedBinaryError(`its AndroidManifest.xml is not valid binary XML: ${reason}`);
}
