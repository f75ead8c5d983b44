import { constants, createReadStream } from "node:fs";
import { access, copyFile, mkdir, readdir, rename, unlink } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { privateDirMode } from "../fs-permissions.ts";
import { assertValidKey, type BlobStore, type ByteRange } from "./blob-store.ts";

/** Objects as files under one directory; the key is the relative path. */
export class FileBlobStore implements BlobStore {
  constructor(readonly root: string) {}

  private pathOf(key: string): string {
    assertValidKey(key);
    const file = path.resolve(this.root, key);
    if (!file.startsWith(this.root + path.sep)) throw new Error(`blob key escapes the store: ${key}`);
    return file;
  }

  async putFile(key: string, localPath: string): Promise<void> {
    const target = this.pathOf(key);
    await mkdir(path.dirname(target), { recursive: true, mode: privateDirMode });
    try {
      // Same file system (the default: staging and blobs both live in the data dir): an atomic rename.
      await rename(localPath, target);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EXDEV") throw error;
      // Another file system: copy under a temporary name, then rename, so the key never holds half a file.
      const partial = `${target}.partial`;
      await copyFile(localPath, partial);
      await rename(partial, target);
      await unlink(localPath);
    }
  }

  async read(key: string, range?: ByteRange): Promise<Readable> {
    const file = this.pathOf(key);
    await access(file, constants.R_OK);
    return createReadStream(file, range ? { start: range.start, end: range.end } : {});
  }

  async delete(key: string): Promise<void> {
    await unlink(this.pathOf(key)).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== "ENOENT") throw error;
    });
  }

  async *keys(): AsyncIterable<string> {
    const entries = await readdir(this.root, { recursive: true, withFileTypes: true }).catch(
      (error: NodeJS.ErrnoException) => {
        if (error.code === "ENOENT") return [];
        throw error;
      },
    );
    for (const entry of entries) {
      if (!entry.isFile()) continue;
      const key = path.relative(this.root, path.join(entry.parentPath, entry.name)).split(path.sep).join("/");
      yield key;
    }
  }

  async check(): Promise<void> {
    await mkdir(this.root, { recursive: true, mode: privateDirMode });
    await access(this.root, constants.W_OK);
  }
}
