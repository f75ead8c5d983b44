import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import path from "node:path";

/** Downloads a binary into `destination`; the cache checks what arrived. */
export type Download = (destination: string) => Promise<void>;

async function sha256Of(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

/**
 * Binaries by SHA-256, downloaded once per host however many runs and device runs need them: a build is
 * typically tested by several plans on several devices. A download lands under a temporary name, is
 * verified, and only then takes its final name, so a half-written file is never used.
 */
export class BinaryCache {
  private readonly inFlight = new Map<string, Promise<string>>();

  constructor(private readonly dir: string) {}

  async get(sha256: string, download: Download): Promise<string> {
    if (!/^[0-9a-f]{64}$/.test(sha256)) throw new Error(`not a SHA-256: ${sha256}`);
    const existing = this.inFlight.get(sha256);
    if (existing) return existing;
    const fetching = this.fetch(sha256, download).finally(() => this.inFlight.delete(sha256));
    this.inFlight.set(sha256, fetching);
    return fetching;
  }

  private async fetch(sha256: string, download: Download): Promise<string> {
    const file = path.join(this.dir, `${sha256}.bin`);
    if (
      await stat(file).then(
        (s) => s.isFile(),
        () => false,
      )
    )
      return file;
    await mkdir(this.dir, { recursive: true });
    const partial = `${file}.${process.pid}.${Date.now()}.part`;
    try {
      await download(partial);
      const actual = await sha256Of(partial);
      if (actual !== sha256) {
        throw new Error(`the downloaded binary's SHA-256 is ${actual}, the server said ${sha256}`);
      }
      await rename(partial, file);
      return file;
    } finally {
      await rm(partial, { force: true });
    }
  }
}
