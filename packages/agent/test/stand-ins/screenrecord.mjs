// `screenrecord [--time-limit N] [--bit-rate B] FILE` (frameworks/av cmds/screenrecord).
// The real tool streams an MP4 through MediaMuxer: ftyp and the mdat data are written while it
// records and the moov box (which holds the duration) only when it stops cleanly — at the time
// limit or on SIGINT. Killed any other way (SIGHUP when the adb client dies, SIGKILL, a vanished
// device) the file keeps no moov and players reject it. That is modelled byte for byte here. The picture is real:
// the H.264 frames of fixtures/screenrecord-loop.mp4 (one second of an app screen), written again for each second
// recorded, with an index that makes browsers play the finished file (video-loop.mjs).
// Time limit: up to Android 13 (sdk 33) "Time limit %ds outside acceptable range [1,180]", exit 2,
// for 0 or > 180; from Android 14 the cap is gone and 0 means no limit (180 stays the default).
import { closeSync, mkdirSync, openSync, renameSync, rmSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import { hostPath, paths, timeScale, watchAttached, writeJson } from "./state.mjs";
import { loop, mvhd, videoMoov } from "./video-loop.mjs";

function box(type, payload) {
  const header = Buffer.alloc(8);
  header.writeUInt32BE(8 + payload.length, 0);
  header.write(type, 4, "latin1");
  return Buffer.concat([header, payload]);
}

function ftyp() {
  return box("ftyp", Buffer.from("isom\0\0\x02\0isomiso2avc1mp41", "latin1"));
}

/** moov holding only mvhd: timescale 1000, so the duration field is the length in ms (the simctl stand-in's). */
export function moov(durationMs) {
  return box("moov", mvhd(durationMs, 2));
}

function parseArgs(args, sdk) {
  let limit = 180;
  let file;
  for (let i = 0; i < args.length; i++) {
    const arg = args[i];
    if (arg === "--time-limit") {
      limit = Number.parseInt(args[++i], 10) || 0;
      if (sdk < 34 && (limit === 0 || limit > 180)) {
        return { error: `Time limit ${limit}s outside acceptable range [1,180]` };
      }
    } else if (arg === "--bit-rate" || arg === "--size") {
      i++;
    } else if (arg === "--verbose" || arg === "--bugreport") {
      // accepted, no effect here
    } else if (arg.startsWith("-")) {
      return { unsupported: arg };
    } else {
      file = arg;
    }
  }
  return { limit, file };
}

export function screenrecord(serial, device, args, onGone) {
  const parsed = parseArgs(args, device.sdk);
  if (parsed.unsupported) {
    process.stderr.write(`stand-in adb: unsupported: screenrecord ${parsed.unsupported}\n`);
    return Promise.resolve(1);
  }
  if (parsed.error) {
    process.stderr.write(`${parsed.error}\n`);
    return Promise.resolve(2);
  }
  if (!parsed.file) {
    process.stderr.write("Must specify output file (see --help).\n");
    return Promise.resolve(2);
  }
  const target = hostPath(serial, parsed.file);
  mkdirSync(dirname(target), { recursive: true });
  // Header first under a temporary name, so no reader ever sees an empty recording.
  const fresh = `${target}.${process.pid}.part`;
  const fd = openSync(fresh, "w");
  writeSync(fd, ftyp());
  const mdatAt = 32;
  // mdat size 0 = "runs to the end of the file" until it is patched at finalisation.
  writeSync(fd, Buffer.from([0, 0, 0, 0, 0x6d, 0x64, 0x61, 0x74]));
  renameSync(fresh, target);
  let mdatBytes = 8;
  const started = Date.now();
  const registration = join(paths.procs(serial), `${process.pid}.json`);
  writeJson(registration, { name: "screenrecord", pid: process.pid, file: parsed.file });

  // One repetition of the loop per second recorded, the first at once (a recording always has a frame).
  const chunkOffsets = [];
  const writeLoop = () => {
    chunkOffsets.push(32 + mdatBytes);
    writeSync(fd, loop.gop);
    mdatBytes += loop.gop.length;
  };
  writeLoop();

  return new Promise((resolve) => {
    const writer = setInterval(() => {
      if (Date.now() - started >= chunkOffsets.length * 1000) writeLoop();
    }, 50);
    const stopWatching = watchAttached(serial, () => {
      clearInterval(writer);
      closeSync(fd);
      onGone();
    });
    const end = (finalise) => {
      clearInterval(writer);
      clearTimeout(limitTimer);
      stopWatching();
      rmSync(registration, { force: true });
      if (finalise) {
        const size = Buffer.alloc(4);
        size.writeUInt32BE(mdatBytes, 0);
        writeSync(fd, size, 0, 4, mdatAt);
        const tail = videoMoov(Math.max(1, Date.now() - started), chunkOffsets);
        writeSync(fd, tail, 0, tail.length, 32 + mdatBytes);
      }
      closeSync(fd);
    };
    const limitTimer =
      parsed.limit > 0
        ? setTimeout(
            () => {
              end(true);
              resolve(0);
            },
            parsed.limit * 1000 * timeScale(),
          )
        : undefined;
    process.once("SIGINT", () => {
      end(true);
      resolve(0);
    });
    // The adb client dying hangs up the device-side process: no moov.
    for (const signal of ["SIGTERM", "SIGHUP"]) {
      process.once(signal, () => {
        end(false);
        process.exit(128 + (signal === "SIGTERM" ? 15 : 1));
      });
    }
  });
}
