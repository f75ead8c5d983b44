/**
 * Random access to a zip on disk. Binaries are up to 500 MiB, so nothing here reads the whole file: yauzl walks
 * the central directory record by record, and only the entries we ask for are inflated, each under a cap.
 */
import { open } from "node:fs/promises";
import type { Readable } from "node:stream";
import { type Entry, fromRandomAccessReaderPromise, type ZipFile } from "yauzl";
import { BlockFileReader } from "./block-file-reader.ts";
import { MAX_ZIP_ENTRIES } from "./limits.ts";
import { reasonOf } from "./reason.ts";
import { UnsupportedBinaryError } from "./unsupported-binary-error.ts";

export interface ZipEntry {
  /** The path inside the archive, as stored (decoded as UTF-8). */
  readonly name: string;
  /** A symbolic link (`zip -y`, `ditto`): a Unix zip's file type bits say so; its data is the link's target. */
  readonly symlink?: boolean;
}

/** S_IFMT and S_IFLNK, in the high 16 bits of the external attributes that zips made on Unix carry. */
const S_IFMT = 0o170000;
const S_IFLNK = 0o120000;

export interface ZipArchive {
  /** Every central directory entry, in archive order. */
  entries(): AsyncIterable<ZipEntry>;
  /** The entry's uncompressed bytes; an entry that declares or inflates to more than `maxBytes` is refused. */
  read(entry: ZipEntry, maxBytes: number): Promise<Buffer>;
}

/** Opens the zip at `path`, runs `use` on it and closes the file whatever happens. */
export async function withZipArchive<T>(path: string, use: (zip: ZipArchive) => Promise<T>): Promise<T> {
  // A missing or unreadable file fails here, as the system error it is.
  const handle = await open(path, "r");
  try {
    const { size } = await handle.stat();
    let zipfile: ZipFile;
    try {
      // decodeStrings: false skips yauzl's file name checks (absolute paths, ".."), which guard extraction to
      // disk. We never extract, and Android installs APKs with such names, so they must not make one unreadable.
      zipfile = await fromRandomAccessReaderPromise(new BlockFileReader(handle), size, {
        autoClose: false,
        decodeStrings: false,
      });
    } catch (error) {
      throw asInspectionError(error, "it is not a zip archive");
    }
    // yauzl also reports failures as "error" events; one that nobody heard would crash the process.
    zipfile.on("error", () => {});
    try {
      if (zipfile.entryCount > MAX_ZIP_ENTRIES) {
        throw new UnsupportedBinaryError(
          `its zip declares ${zipfile.entryCount} entries, more than the ${MAX_ZIP_ENTRIES} we inspect`,
        );
      }
      return await use(new YauzlArchive(zipfile));
    } finally {
      zipfile.close();
    }
  } finally {
    // Waits for reads still in flight (from a stream given up on), then closes the descriptor.
    await handle.close();
  }
}

class YauzlArchive implements ZipArchive {
  // Our entries map back to yauzl's here, so callers never handle yauzl's types.
  readonly #raw = new WeakMap<ZipEntry, Entry>();

  constructor(readonly zipfile: ZipFile) {}

  async *entries(): AsyncIterable<ZipEntry> {
    const iterator = this.zipfile.eachEntry();
    while (true) {
      let next: IteratorResult<Entry>;
      try {
        next = await iterator.next();
      } catch (error) {
        throw asInspectionError(error, "its zip central directory is corrupt");
      }
      if (next.done) return;
      const madeOnUnix = next.value.versionMadeBy >> 8 === 3;
      const mode = (next.value.externalFileAttributes >>> 16) & S_IFMT;
      const entry: ZipEntry = {
        name: next.value.fileNameRaw.toString("utf8"),
        ...(madeOnUnix && mode === S_IFLNK ? { symlink: true } : {}),
      };
      this.#raw.set(entry, next.value);
      yield entry;
    }
  }

  async read(entry: ZipEntry, maxBytes: number): Promise<Buffer> {
    const raw = this.#raw.get(entry);
    if (!raw) throw new Error(`zip entry ${entry.name} does not belong to this archive`);
    // The declared size is checked first, so an honest zip bomb costs nothing; a lying one is stopped below
    // (and by yauzl, which fails the stream as soon as it inflates past the declared size).
    if (raw.uncompressedSize > maxBytes) {
      throw new UnsupportedBinaryError(
        `${entry.name} declares ${raw.uncompressedSize} bytes uncompressed, more than the ${maxBytes} we read`,
      );
    }
    let stream: Readable;
    try {
      stream = await this.zipfile.openReadStreamPromise(raw);
    } catch (error) {
      throw asInspectionError(error, `${entry.name} cannot be read from the zip`);
    }
    const chunks: Buffer[] = [];
    let total = 0;
    try {
      // Leaving this loop early (throw) destroys the stream, which releases yauzl's hold on the file.
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        total += chunk.length;
        if (total > maxBytes) {
          throw new UnsupportedBinaryError(
            `${entry.name} inflates to more than the ${maxBytes} bytes we read`,
          );
        }
        chunks.push(chunk);
      }
    } catch (error) {
      throw asInspectionError(error, `${entry.name} is corrupt in the zip`);
    }
    return Buffer.concat(chunks, total);
  }
}

/**
 * A system error (missing file, permission, disk) is ours to report as a 500 and passes through unchanged;
 * anything yauzl or zlib says about the bytes means the upload is not a readable zip.
 */
function asInspectionError(error: unknown, what: string): Error {
  if (error instanceof UnsupportedBinaryError) return error;
  if (error instanceof Error && typeof Reflect.get(error, "syscall") === "string") return error;
  return new UnsupportedBinaryError(`${what} (${reasonOf(error)})`);
}
