// The report's thumbnails (API.md §16: screenshots as thumbnails): a phone screenshot shrinks to a small PNG
// that still shows its colours where they were; every PNG form reads, interlaced too; what is not a PNG this
// can read safely gives null rather than a broken image.
import { crc32, deflateSync } from "node:zlib";
import { PNG } from "pngjs";
import { describe, expect, it } from "vitest";
import { pngThumbnail } from "./png-thumbnail.ts";

// The agent's stand-in for `adb exec-out screencap -p` (untyped JavaScript): a real app screen, text and all.
const screencap = new URL("../../../../agent/test/stand-ins/screencap.mjs", import.meta.url).href;
const { appScreen } = (await import(screencap)) as {
  appScreen: (width: number, height: number, screen: Record<string, string>) => Buffer;
};

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/**
 * A PNG of any colour type and depth, every row filter 0: `rows` are already packed samples (all the passes'
 * rows in order when `interlaced`).
 */
function png(
  width: number,
  height: number,
  bitDepth: number,
  colorType: number,
  rows: Buffer[],
  extra: Buffer[] = [],
  interlaced = false,
) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = bitDepth;
  ihdr[9] = colorType;
  ihdr[12] = interlaced ? 1 : 0;
  const raw = Buffer.concat(rows.map((row) => Buffer.concat([Buffer.from([0]), row])));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    ...extra,
    chunk("IDAT", deflateSync(raw)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

type Rgb = [number, number, number];

/** An 8-bit RGB image, `interlaced` with Adam7 (pngjs writes no interlaced PNG, so its rows are laid out here). */
function rgbPng(width: number, height: number, colour: (x: number, y: number) => Rgb, interlaced: boolean) {
  const row = (xs: number[], y: number) => Buffer.from(xs.flatMap((x) => colour(x, y)));
  const range = (from: number, to: number, step: number) =>
    Array.from({ length: Math.max(0, Math.ceil((to - from) / step)) }, (_, i) => from + i * step);
  if (!interlaced) {
    const rows = range(0, height, 1).map((y) => row(range(0, width, 1), y));
    return png(width, height, 8, 2, rows);
  }
  // Adam7's passes: first column and row, steps across and down. A pass with no column has no rows at all.
  // Written out again from the PNG specification (section 8.2), not imported from png-thumbnail.ts: an image
  // laid out with the reader's own table would agree with a wrong table.
  const passes = [
    [0, 0, 8, 8],
    [4, 0, 8, 8],
    [0, 4, 4, 8],
    [2, 0, 4, 4],
    [0, 2, 2, 4],
    [1, 0, 2, 2],
    [0, 1, 1, 2],
  ] as const;
  const rows = passes.flatMap(([x0, y0, dx, dy]) => {
    const xs = range(x0, width, dx);
    return xs.length === 0 ? [] : range(y0, height, dy).map((y) => row(xs, y));
  });
  return png(width, height, 8, 2, rows, [], true);
}

/** The RGB pixels of a thumbnail, read back with pngjs. */
function pixelsOf(thumbnail: Buffer): (x: number, y: number) => number[] {
  const { width, data } = PNG.sync.read(thumbnail);
  return (x, y) => [...data.subarray((y * width + x) * 4, (y * width + x) * 4 + 3)];
}

describe("pngThumbnail", () => {
  it("shrinks a 1080×2400 failure screenshot to fit 180×400, small, with the red error box where it was", () => {
    const screen = appScreen(1080, 2400, {
      app: "com.example.basic",
      class: "com.example.basic.LoginTest",
      method: "signInWithWrongPassword",
      state: "failed",
      message: "Expected 'Welcome' but the screen says 'Wrong password'",
    });
    const thumb = pngThumbnail(screen, { maxWidth: 180, maxHeight: 400 });
    expect(thumb).not.toBeNull();
    if (!thumb) return;
    expect([thumb.width, thumb.height]).toEqual([180, 400]);
    expect(thumb.png.length).toBeLessThan(40_000);
    expect(thumb.png.length).toBeLessThan(screen.length / 3);
    const at = pixelsOf(thumb.png);
    // The status bar (dark blue) at the top, the light background beside the form.
    expect(at(90, 5)).toEqual([28, 63, 148]);
    expect(at(2, 200)).toEqual([245, 245, 245]);
    // Somewhere below the form: the red error box (179, 38, 30), averaged with its white text.
    const reddish = Array.from({ length: thumb.height }, (_, y) => at(20, y)).filter(
      ([r, g, b]) => (r ?? 0) > 150 && (g ?? 0) < 90 && (b ?? 0) < 90,
    );
    expect(reddish.length).toBeGreaterThan(5);
  });

  it("never enlarges a small image", () => {
    const rows = Array.from({ length: 10 }, () => Buffer.alloc(30, 200));
    const thumb = pngThumbnail(png(10, 10, 8, 2, rows), { maxWidth: 180, maxHeight: 400 });
    expect([thumb?.width, thumb?.height]).toEqual([10, 10]);
  });

  it("reads RGBA (on white), 16-bit grey and 1-bit palette images", () => {
    // Half-transparent black on white is mid grey.
    const rgba = png(
      4,
      4,
      8,
      6,
      Array.from({ length: 4 }, () => Buffer.from(Array(4).fill([0, 0, 0, 128]).flat())),
    );
    const grey16 = png(
      4,
      4,
      16,
      0,
      Array.from({ length: 4 }, () => Buffer.from([0x80, 0, 0x80, 0, 0x80, 0, 0x80, 0])),
    );
    const palette = png(
      8,
      2,
      1,
      3,
      [Buffer.from([0b10101010]), Buffer.from([0b10101010])],
      [chunk("PLTE", Buffer.from([255, 0, 0, 0, 0, 255]))],
    );
    const one = (file: Buffer, w: number, h: number) => {
      const thumb = pngThumbnail(file, { maxWidth: w, maxHeight: h });
      return thumb && pixelsOf(thumb.png)(0, 0);
    };
    expect(one(rgba, 1, 1)).toEqual([127, 127, 127]);
    expect(one(grey16, 1, 1)).toEqual([128, 128, 128]);
    // Blue and red columns averaged in pairs: purple.
    expect(one(palette, 4, 1)).toEqual([128, 0, 128]);
  });

  it("reads an interlaced (Adam7) PNG as it reads the same image not interlaced", () => {
    // 10×6: some of Adam7's passes are partial. Red grows to the right, green downwards.
    const colour = (x: number, y: number): Rgb => [x * 25, y * 40, 100];
    const size = { maxWidth: 5, maxHeight: 3 };
    const interlaced = pngThumbnail(rgbPng(10, 6, colour, true), size);
    const plain = pngThumbnail(rgbPng(10, 6, colour, false), size);
    expect(interlaced && [interlaced.width, interlaced.height]).toEqual([5, 3]);
    expect(interlaced?.png).toEqual(plain?.png);
    if (!interlaced) return;
    const at = pixelsOf(interlaced.png);
    // Each thumbnail pixel averages a 2×2 block: (0, 25) × (0, 40) at the top left, (200, 225) × (160, 200) at the
    // bottom right.
    expect(at(0, 0)).toEqual([13, 20, 100]);
    expect(at(4, 2)).toEqual([213, 180, 100]);
  });

  it("gives null for what it cannot read: not a PNG, corrupt, truncated, or claiming billions of pixels", () => {
    const size = { maxWidth: 180, maxHeight: 400 };
    expect(pngThumbnail(Buffer.from("GIF89a not a png"), size)).toBeNull();
    const good = png(
      4,
      4,
      8,
      2,
      Array.from({ length: 4 }, () => Buffer.alloc(12, 9)),
    );
    expect(pngThumbnail(good, size)).not.toBeNull();
    // A changed header byte (its checksum no longer matches).
    const corrupt = Buffer.from(good);
    corrupt[8 + 8 + 9] = 6;
    expect(pngThumbnail(corrupt, size)).toBeNull();
    expect(pngThumbnail(good.subarray(0, good.length - 30), size)).toBeNull();
    // Refused from the header alone: 10 billion pixels are never allocated.
    expect(pngThumbnail(png(100_000, 100_000, 8, 2, [Buffer.alloc(3)]), size)).toBeNull();
    // A 4×4 interlaced image whose data inflates to 1 MB: more than its header allows. (pngjs refuses it too, but
    // only after inflating it all; png-thumbnail.ts stops at the size the header allows, which null cannot show.)
    const bomb = png(4, 4, 8, 2, [Buffer.alloc(1_000_000)], [], true);
    expect(pngThumbnail(bomb, size)).toBeNull();
  });
});
