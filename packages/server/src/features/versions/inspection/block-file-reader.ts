/**
 * The random-access reader yauzl reads the zip through. yauzl's own reader makes two `fs.read` calls, queued
 * one at a time, for every central directory record: 60,000 entries took 4 s. Small reads here are served from
 * one 64 KiB block read ahead of them, which walks the same directory in a fraction of that, and entry data is
 * streamed straight from the file as before.
 */
import type { FileHandle } from "node:fs/promises";
import { Readable } from "node:stream";
import { RandomAccessReader } from "yauzl";

const BLOCK_SIZE = 64 * 1024;

export class BlockFileReader extends RandomAccessReader {
  #block = Buffer.alloc(0);
  #blockStart = 0;

  /** The handle stays the caller's to close: yauzl's close() does nothing here. */
  constructor(private readonly handle: FileHandle) {
    super();
  }

  override read(
    buffer: Buffer,
    offset: number,
    length: number,
    position: number,
    callback: (err: Error | null) => void,
  ): void {
    this.#fill(buffer, offset, length, position).then(
      () => callback(null),
      (error: Error) => callback(error),
    );
  }

  /**
   * Entry data, read through the handle. Not handle.createReadStream: on Node 20 destroying such a stream
   * closes the handle even with autoClose: false, and yauzl destroys each entry's stream once it is inflated,
   * so the second entry read from a zip (an .xctestrun, then an app's Info.plist) found the file closed.
   */
  override _readStreamForRange(start: number, end: number): Readable {
    const handle = this.handle;
    let position = start;
    return new Readable({
      highWaterMark: BLOCK_SIZE,
      read() {
        const length = Math.min(BLOCK_SIZE, end - position);
        if (length <= 0) {
          this.push(null);
          return;
        }
        handle.read(Buffer.allocUnsafe(length), 0, length, position).then(
          ({ bytesRead, buffer }) => {
            if (bytesRead === 0) {
              this.destroy(new Error("unexpected end of file"));
              return;
            }
            position += bytesRead;
            this.push(buffer.subarray(0, bytesRead));
          },
          (error: Error) => this.destroy(error),
        );
      },
    });
  }

  override close(callback: (err: Error | null) => void): void {
    setImmediate(() => callback(null));
  }

  /** Fills `target` completely, or fails: yauzl treats a short read as corruption either way. */
  async #fill(target: Buffer, offset: number, length: number, position: number): Promise<void> {
    if (length > BLOCK_SIZE) {
      await this.#readExactly(target, offset, length, position);
      return;
    }
    const cached = position >= this.#blockStart && position + length <= this.#blockStart + this.#block.length;
    if (!cached) {
      const block = Buffer.allocUnsafe(BLOCK_SIZE);
      const { bytesRead } = await this.handle.read(block, 0, BLOCK_SIZE, position);
      if (bytesRead < length) throw new Error("unexpected end of file");
      // Copy from the block just read: another read may replace the cache while this one awaited.
      block.copy(target, offset, 0, length);
      this.#block = block.subarray(0, bytesRead);
      this.#blockStart = position;
      return;
    }
    const from = position - this.#blockStart;
    this.#block.copy(target, offset, from, from + length);
  }

  async #readExactly(target: Buffer, offset: number, length: number, position: number): Promise<void> {
    for (let done = 0; done < length; ) {
      const { bytesRead } = await this.handle.read(target, offset + done, length - done, position + done);
      if (bytesRead === 0) throw new Error("unexpected end of file");
      done += bytesRead;
    }
  }
}
