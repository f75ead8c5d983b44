import { open } from "node:fs/promises";
import { inflateRawSync } from "node:zlib";

/** A zip's end-of-central-directory record is in its last 65,557 bytes (22 + a comment of up to 65,535). */
const maxEndRecordSearch = 22 + 0xffff;

/**
 * One entry of a zip file (an APK), read from the central directory and inflated, without reading the rest
 * of the archive; `maxBytes` bounds what it may inflate to. Undefined when the zip has no such entry; throws
 * when the file is not a zip this can read (zip64, or an unknown compression method).
 */
export async function readZipEntry(
  file: string,
  entryName: string,
  maxBytes: number,
): Promise<Buffer | undefined> {
  const handle = await open(file, "r");
  try {
    const { size } = await handle.stat();
    const read = async (position: number, length: number): Promise<Buffer> => {
      const buffer = Buffer.alloc(length);
      const { bytesRead } = await handle.read(buffer, 0, length, position);
      return buffer.subarray(0, bytesRead);
    };
    const tailLength = Math.min(size, maxEndRecordSearch);
    const tail = await read(size - tailLength, tailLength);
    let end = -1;
    for (let i = tail.length - 22; i >= 0; i--) {
      if (tail.readUInt32LE(i) === 0x06054b50) {
        end = i;
        break;
      }
    }
    if (end < 0) throw new Error("not a zip file (no end of central directory)");
    const entries = tail.readUInt16LE(end + 10);
    const directorySize = tail.readUInt32LE(end + 12);
    const directoryOffset = tail.readUInt32LE(end + 16);
    if (directoryOffset === 0xffffffff) throw new Error("a zip64 archive, which this reader does not read");
    const directory = await read(directoryOffset, directorySize);
    let at = 0;
    for (let n = 0; n < entries && at + 46 <= directory.length; n++) {
      if (directory.readUInt32LE(at) !== 0x02014b50) throw new Error("a damaged central directory");
      const method = directory.readUInt16LE(at + 10);
      const compressedSize = directory.readUInt32LE(at + 20);
      const uncompressedSize = directory.readUInt32LE(at + 24);
      const nameLength = directory.readUInt16LE(at + 28);
      const extraLength = directory.readUInt16LE(at + 30);
      const commentLength = directory.readUInt16LE(at + 32);
      const localOffset = directory.readUInt32LE(at + 42);
      const name = directory.toString("utf8", at + 46, at + 46 + nameLength);
      at += 46 + nameLength + extraLength + commentLength;
      if (name !== entryName) continue;
      if (uncompressedSize > maxBytes)
        throw new Error(`${entryName} is ${uncompressedSize} bytes, more than ${maxBytes}`);
      const local = await read(localOffset, 30);
      if (local.length < 30 || local.readUInt32LE(0) !== 0x04034b50)
        throw new Error("a damaged local header");
      const dataStart = localOffset + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
      const data = await read(dataStart, compressedSize);
      if (method === 0) return data;
      if (method === 8) return inflateRawSync(data, { maxOutputLength: maxBytes });
      throw new Error(`${entryName} uses compression method ${method}, which this reader does not read`);
    }
    return undefined;
  } finally {
    await handle.close();
  }
}
