// The picture of the screenrecord stand-in's MP4s: the H.264 frames of fixtures/screenrecord-loop.mp4 (one second,
// one keyframe then predicted frames; see fixtures/make-screenrecord-loop.sh), repeated for as long as it records,
// and the index (moov) that makes a player play them. ISO/IEC 14496-12 boxes: the sample description (avcC) is
// copied from the fixture; the timing, sync-sample, chunk and size tables are written for the repeated frames.
import { readFileSync } from "node:fs";

const CONTAINERS = new Set(["moov", "trak", "mdia", "minf", "stbl"]);

/** The boxes inside `data` by type (the first of each), containers opened: "moov/trak/mdia/mdhd" → the box. */
function boxes(data, prefix = "", out = new Map()) {
  let at = 0;
  while (at + 8 <= data.length) {
    const size = data.readUInt32BE(at);
    const type = data.toString("latin1", at + 4, at + 8);
    if (size < 8) throw new Error(`screenrecord-loop.mp4: box ${type} of size ${size} is not supported`);
    const box = data.subarray(at, at + size);
    const path = `${prefix}${type}`;
    if (!out.has(path)) out.set(path, box);
    if (CONTAINERS.has(type)) boxes(box.subarray(8), `${path}/`, out);
    at += size;
  }
  return out;
}

function need(found, path) {
  const box = found.get(path);
  if (!box) throw new Error(`screenrecord-loop.mp4 has no ${path}`);
  return box;
}

/** Reads the fixture once: its frames (bytes of each sample, in decoding order) and the boxes reused as they are. */
function readLoop() {
  const file = readFileSync(new URL("./fixtures/screenrecord-loop.mp4", import.meta.url));
  const found = boxes(file);
  const stbl = "moov/trak/mdia/minf/stbl/";
  if (found.has(`${stbl}ctts`))
    throw new Error("screenrecord-loop.mp4 must have no B-frames (it has a ctts)");
  const stsz = need(found, `${stbl}stsz`);
  const fixedSize = stsz.readUInt32BE(12);
  const count = stsz.readUInt32BE(16);
  const sizes = Array.from({ length: count }, (_, i) => fixedSize || stsz.readUInt32BE(20 + i * 4));
  const stsc = need(found, `${stbl}stsc`);
  const runs = Array.from({ length: stsc.readUInt32BE(12) }, (_, i) => ({
    firstChunk: stsc.readUInt32BE(16 + i * 12),
    perChunk: stsc.readUInt32BE(20 + i * 12),
  }));
  const stco = need(found, `${stbl}stco`);
  const frames = [];
  for (let chunk = 1; chunk <= stco.readUInt32BE(12); chunk++) {
    const perChunk = runs.filter((r) => r.firstChunk <= chunk).at(-1)?.perChunk ?? 0;
    let offset = stco.readUInt32BE(16 + (chunk - 1) * 4);
    for (let i = 0; i < perChunk && frames.length < count; i++) {
      const size = sizes[frames.length];
      frames.push(file.subarray(offset, offset + size));
      offset += size;
    }
  }
  const mdhd = need(found, "moov/trak/mdia/mdhd");
  if (mdhd[8] !== 0) throw new Error("screenrecord-loop.mp4: only a version 0 mdhd is read");
  return {
    frames,
    gop: Buffer.concat(frames),
    timescale: mdhd.readUInt32BE(20),
    tkhd: need(found, "moov/trak/tkhd"),
    mdhd,
    hdlr: need(found, "moov/trak/mdia/hdlr"),
    vmhd: need(found, "moov/trak/mdia/minf/vmhd"),
    dinf: need(found, "moov/trak/mdia/minf/dinf"),
    stsd: need(found, `${stbl}stsd`),
  };
}

export const loop = readLoop();

function box(type, ...payload) {
  const body = Buffer.concat(payload);
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + body.length, 0);
  header.write(type, 4, "latin1");
  return Buffer.concat([header, body]);
}

/** A full box's table: version/flags 0, the entry count, then each entry's 32-bit fields. */
function table(type, entries) {
  const body = Buffer.alloc(8 + entries.flat().length * 4);
  body.writeUInt32BE(entries.length, 4);
  for (const [i, value] of entries.flat().entries()) body.writeUInt32BE(value, 8 + i * 4);
  return box(type, body);
}

/** A copy of a version 0 box with the 32-bit field at `at` (from the box start) set to `value`. */
function patched(original, at, value) {
  const copy = Buffer.from(original);
  copy.writeUInt32BE(value, at);
  return copy;
}

/** mvhd version 0: timescale 1000, so the duration field is the length in ms. */
export function mvhd(durationMs, nextTrackId) {
  const body = Buffer.alloc(100);
  const now = Math.floor(Date.now() / 1000) + 2082844800;
  body.writeUInt32BE(now, 4);
  body.writeUInt32BE(now, 8);
  body.writeUInt32BE(1000, 12);
  body.writeUInt32BE(durationMs, 16);
  body.writeUInt32BE(0x00010000, 20); // rate 1.0
  body.writeUInt16BE(0x0100, 24); // volume 1.0
  for (const [i, v] of [0x00010000, 0, 0, 0, 0x00010000, 0, 0, 0, 0x40000000].entries()) {
    body.writeUInt32BE(v, 36 + i * 4);
  }
  body.writeUInt32BE(nextTrackId, 96);
  return box("mvhd", body);
}

/**
 * The moov of a recording of `loops` repetitions of the fixture's frames, the i-th written at `chunkOffsets[i]`
 * in the file, lasting `durationMs`: the frames share that time evenly, each repetition starts with a keyframe.
 */
export function videoMoov(durationMs, chunkOffsets) {
  const perLoop = loop.frames.length;
  const count = perLoop * chunkOffsets.length;
  const mediaDuration = Math.max(count, Math.round((durationMs * loop.timescale) / 1000));
  const delta = Math.floor(mediaDuration / count);
  const last = mediaDuration - delta * (count - 1);
  const stts = table(
    "stts",
    count > 1
      ? [
          [count - 1, delta],
          [1, last],
        ]
      : [[1, last]],
  );
  const stss = table(
    "stss",
    chunkOffsets.map((_, i) => [i * perLoop + 1]),
  );
  const stsc = table("stsc", [[1, perLoop, 1]]);
  const sizes = chunkOffsets.flatMap(() => loop.frames.map((frame) => frame.length));
  const stszBody = Buffer.alloc(12 + sizes.length * 4);
  stszBody.writeUInt32BE(sizes.length, 8);
  for (const [i, size] of sizes.entries()) stszBody.writeUInt32BE(size, 12 + i * 4);
  const stco = table(
    "stco",
    chunkOffsets.map((offset) => [offset]),
  );
  const stbl = box("stbl", loop.stsd, stts, stss, stsc, box("stsz", stszBody), stco);
  const minf = box("minf", loop.vmhd, loop.dinf, stbl);
  // mdhd v0: duration at 24 from the box start; tkhd v0: duration at 28, in the movie's timescale (ms).
  const mdia = box("mdia", patched(loop.mdhd, 24, mediaDuration), loop.hdlr, minf);
  const tkhd = patched(loop.tkhd, 28, durationMs);
  return box("moov", mvhd(durationMs, 2), box("trak", tkhd, mdia));
}
