// Builds a large, valid APK for upload benchmarks: a small real APK with one big STORED (uncompressed) entry
// of random bytes added, written as a plain zip (no ZIP64: every size and offset fits in 32 bits).
import { randomFillSync } from "node:crypto";
import { open, readFile } from "node:fs/promises";
import { crc32 } from "node:zlib";

const endOfCentralDirectory = 0x06054b50;
const centralHeader = 0x02014b50;
const localHeader = 0x04034b50;
const endRecordBytes = 22;
const chunkBytes = 8 * 1024 * 1024;

export interface BigApk {
  file: string;
  /** Size of the whole file, exactly as asked for. */
  bytes: number;
  /** Name and size of the entry that was added. */
  entry: string;
  entryBytes: number;
  seconds: number;
}

/** The end of central directory record of a zip without ZIP64: where the central directory is and how big. */
function findDirectory(zip: Buffer): { offset: number; size: number; entries: number } {
  // The record is the last 22 bytes, unless the archive has a comment (at most 65,535 bytes) after it.
  const lowest = Math.max(0, zip.length - endRecordBytes - 0xffff);
  for (let at = zip.length - endRecordBytes; at >= lowest; at--) {
    if (zip.readUInt32LE(at) !== endOfCentralDirectory) continue;
    const entries = zip.readUInt16LE(at + 10);
    const size = zip.readUInt32LE(at + 12);
    const offset = zip.readUInt32LE(at + 16);
    if (offset + size === at && entries !== 0xffff) return { offset, size, entries };
  }
  throw new Error("not a zip archive without ZIP64 (no end of central directory record found)");
}

/**
 * Writes `source` (an APK) to `target` with a STORED entry `entry` of random bytes added, sized so that the
 * whole file is exactly `totalBytes`. The source's entries (and APK signing block, if any) are kept byte for
 * byte; the new entry goes after them, then the old central directory with the new entry's record, then a new
 * end record. The signature no longer covers the file, which the server does not check.
 */
export async function buildBigApk(
  source: string,
  target: string,
  totalBytes: number,
  entry = "assets/blob.bin",
): Promise<BigApk> {
  const started = performance.now();
  const original = await readFile(source);
  const directory = findDirectory(original);
  const name = Buffer.from(entry, "utf8");
  const head = original.subarray(0, directory.offset);
  const oldDirectory = original.subarray(directory.offset, directory.offset + directory.size);
  const overhead = head.length + 30 + name.length + oldDirectory.length + 46 + name.length + endRecordBytes;
  const entryBytes = totalBytes - overhead;
  if (entryBytes < 0 || totalBytes > 0xfffffffe) {
    throw new Error(`cannot build a ${totalBytes}-byte APK from ${source} without ZIP64`);
  }

  const handle = await open(target, "wx", 0o600);
  try {
    await handle.write(head, 0, head.length, 0);
    const dataAt = head.length + 30 + name.length;
    const chunk = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(1, entryBytes)));
    let crc = 0;
    for (let written = 0; written < entryBytes; ) {
      const length = Math.min(chunk.length, entryBytes - written);
      const bytes = chunk.subarray(0, length);
      randomFillSync(bytes);
      crc = crc32(bytes, crc);
      await handle.write(bytes, 0, length, dataAt + written);
      written += length;
    }

    const local = Buffer.alloc(30);
    local.writeUInt32LE(localHeader, 0);
    local.writeUInt16LE(10, 4); // version needed: 1.0, enough for STORED
    local.writeUInt16LE(0, 6); // flags: sizes and CRC are in this header, no data descriptor
    local.writeUInt16LE(0, 8); // method: STORED
    local.writeUInt16LE(0, 10); // time 00:00
    local.writeUInt16LE(0x0021, 12); // date 1980-01-01
    local.writeUInt32LE(crc >>> 0, 14);
    local.writeUInt32LE(entryBytes, 18); // compressed size
    local.writeUInt32LE(entryBytes, 22); // uncompressed size
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28); // extra field length
    await handle.write(Buffer.concat([local, name]), 0, local.length + name.length, head.length);

    const central = Buffer.alloc(46);
    central.writeUInt32LE(centralHeader, 0);
    central.writeUInt16LE(10, 4); // version made by
    central.writeUInt16LE(10, 6); // version needed
    central.writeUInt16LE(0, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x0021, 14);
    central.writeUInt32LE(crc >>> 0, 16);
    central.writeUInt32LE(entryBytes, 20);
    central.writeUInt32LE(entryBytes, 24);
    central.writeUInt16LE(name.length, 28);
    // extra, comment, disk number, internal and external attributes: 0
    central.writeUInt32LE(head.length, 42); // offset of the local header
    const newDirectory = Buffer.concat([oldDirectory, central, name]);
    const directoryAt = dataAt + entryBytes;

    const end = Buffer.alloc(endRecordBytes);
    end.writeUInt32LE(endOfCentralDirectory, 0);
    end.writeUInt16LE(directory.entries + 1, 8);
    end.writeUInt16LE(directory.entries + 1, 10);
    end.writeUInt32LE(newDirectory.length, 12);
    end.writeUInt32LE(directoryAt, 16);
    const tail = Buffer.concat([newDirectory, end]);
    await handle.write(tail, 0, tail.length, directoryAt);

    const { size } = await handle.stat();
    if (size !== totalBytes) throw new Error(`built ${size} bytes, not ${totalBytes}`);
    // On disk before anything is measured, so its writeback does not overlap the measured uploads.
    await handle.datasync();
  } finally {
    await handle.close();
  }
  return {
    file: target,
    bytes: totalBytes,
    entry,
    entryBytes,
    seconds: (performance.now() - started) / 1000,
  };
}
