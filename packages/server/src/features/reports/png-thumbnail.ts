/**
 * A small PNG of a screenshot for the report to share (API.md §16): decoded, shrunk by averaging the pixels
 * each thumbnail pixel covers, and written again as an 8-bit RGB PNG. Decoding and encoding are pngjs's, pure
 * JavaScript, so the server still needs no native image library (one would have to be built on every platform
 * the server is installed on).
 *
 * Accepted: every PNG colour type (grey, RGB, palette, grey + alpha, RGBA) at every bit depth the format allows
 * (1, 2, 4, 8, 16; 16-bit samples scaled to 8), interlaced (Adam7) or not, with palette alpha or a transparent
 * colour (tRNS). Anything else gives null and the report says it shows none: not a PNG, a bad checksum, a
 * truncated file, data that inflates to more than the header says, or more than `maxPixels`.
 */
import { inflateSync } from "node:zlib";
import { PNG } from "pngjs";

export interface ThumbnailSize {
  maxWidth: number;
  maxHeight: number;
}

export interface Thumbnail {
  png: Buffer;
  width: number;
  height: number;
}

const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
/** A phone screenshot is about 3 million pixels; a tablet's 6; more than this is not a screenshot we shrink. */
const maxPixels = 40_000_000;
const channelsOf: Record<number, number> = { 0: 1, 2: 3, 3: 1, 4: 2, 6: 4 };
/** Adam7's seven passes: the first column and row each samples, and its steps across and down. */
const adam7 = [
  [0, 0, 8, 8],
  [4, 0, 8, 8],
  [0, 4, 4, 8],
  [2, 0, 4, 4],
  [0, 2, 2, 4],
  [1, 0, 2, 2],
  [0, 1, 1, 2],
] as const;

interface Header {
  width: number;
  height: number;
  bitsPerPixel: number;
  interlaced: boolean;
}

/**
 * The header, read from the bytes before anything is decoded: the PNG format puts IHDR first, so a huge
 * image is refused here without allocating it.
 */
function headerOf(file: Buffer): Header | null {
  if (file.length < 33 || !file.subarray(0, 8).equals(signature)) return null;
  if (file.readUInt32BE(8) !== 13 || file.toString("latin1", 12, 16) !== "IHDR") return null;
  const width = file.readUInt32BE(16);
  const height = file.readUInt32BE(20);
  const channels = channelsOf[file[25] as number];
  if (width === 0 || height === 0 || width * height > maxPixels || channels === undefined) return null;
  return { width, height, bitsPerPixel: channels * (file[24] as number), interlaced: file[28] === 1 };
}

/** Bytes the filtered rows of an interlaced image take: each pass's rows, each with its filter byte. */
function interlacedBytes({ width, height, bitsPerPixel }: Header): number {
  let bytes = 0;
  for (const [x0, y0, dx, dy] of adam7) {
    const passWidth = Math.ceil(Math.max(0, width - x0) / dx);
    const passHeight = Math.ceil(Math.max(0, height - y0) / dy);
    if (passWidth > 0) bytes += passHeight * (1 + Math.ceil((passWidth * bitsPerPixel) / 8));
  }
  return bytes;
}

/**
 * Whether an interlaced image's data inflates to no more than its header allows. pngjs bounds the inflation
 * of a non-interlaced image by its size, but inflates an interlaced one unbounded (node_modules/pngjs/lib/
 * parser-sync.js): without this, a small file could make it allocate gigabytes.
 */
function interlacedDataFits(file: Buffer, header: Header): boolean {
  const data: Buffer[] = [];
  for (let at = 8; at + 8 <= file.length; ) {
    const length = file.readUInt32BE(at);
    const type = file.toString("latin1", at + 4, at + 8);
    if (type === "IDAT") data.push(file.subarray(at + 8, at + 8 + length));
    if (type === "IEND") break;
    at += 12 + length;
  }
  try {
    inflateSync(Buffer.concat(data), { maxOutputLength: interlacedBytes(header) });
    return true;
  } catch {
    return false;
  }
}

/** The image as 8-bit RGBA, whatever its form; null when pngjs cannot read it. */
function decode(file: Buffer): PNG | null {
  const header = headerOf(file);
  if (!header || (header.interlaced && !interlacedDataFits(file, header))) return null;
  try {
    return PNG.sync.read(file);
  } catch {
    return null;
  }
}

/**
 * The screenshot shrunk to fit `size` (never enlarged), transparent parts on white; null when `file` is not a
 * PNG this can read.
 */
export function pngThumbnail(file: Buffer, size: ThumbnailSize): Thumbnail | null {
  const decoded = decode(file);
  if (!decoded) return null;
  const { width, height, data } = decoded;
  const scale = Math.max(1, width / size.maxWidth, height / size.maxHeight);
  const outWidth = Math.max(1, Math.round(width / scale));
  const outHeight = Math.max(1, Math.round(height / scale));
  // Each source pixel is added to the thumbnail pixel it falls in: an average over the area it covers.
  const sums = new Float64Array(outWidth * outHeight * 3);
  const counts = new Uint32Array(outWidth * outHeight);
  const columns = Uint32Array.from({ length: width }, (_, x) =>
    Math.min(outWidth - 1, Math.floor(x / scale)),
  );
  for (let y = 0; y < height; y++) {
    const rowStart = Math.min(outHeight - 1, Math.floor(y / scale)) * outWidth;
    for (let x = 0; x < width; x++) {
      const at = (y * width + x) * 4;
      const r = data[at] as number;
      const g = data[at + 1] as number;
      const b = data[at + 2] as number;
      const a = data[at + 3] as number;
      const target = rowStart + (columns[x] as number);
      const s3 = target * 3;
      if (a === 255) {
        sums[s3] = (sums[s3] as number) + r;
        sums[s3 + 1] = (sums[s3 + 1] as number) + g;
        sums[s3 + 2] = (sums[s3 + 2] as number) + b;
      } else {
        // On white: what a transparent screenshot looks like on the page.
        const white = 255 - a;
        sums[s3] = (sums[s3] as number) + (r * a) / 255 + white;
        sums[s3 + 1] = (sums[s3 + 1] as number) + (g * a) / 255 + white;
        sums[s3 + 2] = (sums[s3 + 2] as number) + (b * a) / 255 + white;
      }
      counts[target] = (counts[target] as number) + 1;
    }
  }
  const thumbnail = new PNG({ width: outWidth, height: outHeight });
  for (let i = 0; i < counts.length; i++) {
    const count = counts[i] || 1;
    for (let c = 0; c < 3; c++) thumbnail.data[i * 4 + c] = Math.round((sums[i * 3 + c] ?? 0) / count);
    thumbnail.data[i * 4 + 3] = 255;
  }
  // RGB without alpha (every pixel is opaque by now), each row filtered with Up: the rows of a UI repeat one
  // another. zlib's default strategy, not pngjs's run-length one, which made a phone screenshot's thumbnail
  // (png-thumbnail.test.ts) over twice as large; the report's data URIs have a size limit (report-source.ts).
  const png = PNG.sync.write(thumbnail, { colorType: 2, filterType: 2, deflateLevel: 9, deflateStrategy: 0 });
  return { png, width: outWidth, height: outHeight };
}
