// `exec-out screencap -p`: a real PNG (signature, IHDR, zlib IDAT, IEND) of the device's screen size. Before any
// test ran, the screen is one flat colour per device (its `screenColor`), so tests can tell captures apart. Once
// `am instrument` has run a test, it is the app screen that test left (instrument.mjs writes it to the device's
// screen.json): a status bar with the clock, the app bar with the screen's name, the test's name and a form,
// and, after a failure, the error in a red box, so each failure's screenshot is recognisably its own.
import { crc32, deflateSync } from "node:zlib";
import { FIRST_CHAR, GLYPH_HEIGHT, GLYPH_WIDTH, GLYPHS, LAST_CHAR } from "./font.mjs";

function chunk(type, data) {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length, 0);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0, 0);
  return Buffer.concat([length, body, crc]);
}

/** An RGB image as a PNG: 8-bit truecolour, every row with filter 0, one IDAT. */
function encode({ width, height, rgb }) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 2; // truecolour RGB
  const stride = width * 3;
  const raw = Buffer.alloc((1 + stride) * height);
  for (let y = 0; y < height; y++) rgb.copy(raw, y * (1 + stride) + 1, y * stride, (y + 1) * stride);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(raw, { level: 1 })),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

function canvas(width, height, colour) {
  const image = { width, height, rgb: Buffer.alloc(width * height * 3) };
  fill(image, 0, 0, width, height, colour);
  return image;
}

function fill(image, x, y, w, h, [r, g, b]) {
  const x0 = Math.max(0, Math.round(x));
  const x1 = Math.min(image.width, Math.round(x + w));
  const y0 = Math.max(0, Math.round(y));
  const y1 = Math.min(image.height, Math.round(y + h));
  if (x1 <= x0) return;
  const row = Buffer.alloc((x1 - x0) * 3);
  for (let i = 0; i < row.length; i += 3) {
    row[i] = r;
    row[i + 1] = g;
    row[i + 2] = b;
  }
  for (let yy = y0; yy < y1; yy++) row.copy(image.rgb, (yy * image.width + x0) * 3);
}

function outline(image, x, y, w, h, thickness, colour) {
  fill(image, x, y, w, thickness, colour);
  fill(image, x, y + h - thickness, w, thickness, colour);
  fill(image, x, y, thickness, h, colour);
  fill(image, x + w - thickness, y, thickness, h, colour);
}

/** Draws one line of text with its top left at (x, y), each font pixel `scale` screen pixels wide. */
function text(image, x, y, line, scale, colour) {
  for (const [n, char] of [...line].entries()) {
    const code = char.charCodeAt(0);
    const glyph =
      code >= FIRST_CHAR && code <= LAST_CHAR ? code - FIRST_CHAR : "?".charCodeAt(0) - FIRST_CHAR;
    for (let row = 0; row < GLYPH_HEIGHT; row++) {
      const bits = GLYPHS.readUInt16BE((glyph * GLYPH_HEIGHT + row) * 2);
      for (let col = 0; col < GLYPH_WIDTH; col++) {
        if (bits & (0x8000 >> col)) {
          fill(image, x + (n * GLYPH_WIDTH + col) * scale, y + row * scale, scale, scale, colour);
        }
      }
    }
  }
}

/** Splits text into lines of at most `columns` characters, at spaces where it can. */
function wrap(message, columns) {
  const lines = [];
  for (const paragraph of message.split("\n")) {
    let line = "";
    for (const word of paragraph.split(" ")) {
      for (let piece = word; piece.length > 0; piece = piece.slice(columns)) {
        const part = piece.slice(0, columns);
        if (line && line.length + 1 + part.length > columns) {
          lines.push(line);
          line = part;
        } else {
          line = line ? `${line} ${part}` : part;
        }
      }
    }
    lines.push(line);
  }
  return lines;
}

const BLUE = [32, 96, 160];
const DARK_BLUE = [28, 63, 148];
const BACKGROUND = [245, 245, 245];
const GREY = [176, 176, 176];
const TEXT = [33, 33, 33];
const MUTED = [97, 97, 97];
const RED = [179, 38, 30];
const WHITE = [255, 255, 255];

/** "com.example.basic" → "Basic": the label a launcher would show for an app without one. */
function appLabel(pkg) {
  const last = pkg.split(".").at(-1) ?? pkg;
  return last.charAt(0).toUpperCase() + last.slice(1);
}

/** "com.example.basic.LoginTest" → "Login": the screen a test class drives. */
function screenName(testClass) {
  return (testClass.split(".").at(-1) ?? testClass).replace(/Tests?$/, "") || testClass;
}

/**
 * The app screen a test left: `screen` is { app, class, method, state: "running" | "failed", message? } (see
 * instrument.mjs). Sizes are those of a 1080-pixel-wide phone, scaled to the device's width.
 */
export function appScreen(width, height, screen, now = new Date()) {
  const u = width / 1080;
  const px = (n) => Math.round(n * u);
  const scaled = (n) => Math.max(1, Math.round(n * u));
  const image = canvas(width, height, BACKGROUND);
  const margin = px(48);
  // Status bar with the clock, app bar with the screen's name.
  fill(image, 0, 0, width, px(84), DARK_BLUE);
  const clock = `${String(now.getHours()).padStart(2, "0")}:${String(now.getMinutes()).padStart(2, "0")}`;
  text(image, margin, px(18), clock, scaled(2), WHITE);
  fill(image, 0, px(84), width, px(224), BLUE);
  text(image, margin, px(136), `${appLabel(screen.app)}: ${screenName(screen.class)}`, scaled(4), WHITE);
  // The test's name and class, then a form (two fields and a button), as a screen under test looks.
  let y = px(360);
  for (const line of wrap(screen.method, Math.floor((width - 2 * margin) / (GLYPH_WIDTH * scaled(3))))) {
    text(image, margin, y, line, scaled(3), TEXT);
    y += GLYPH_HEIGHT * scaled(3) + px(8);
  }
  text(image, margin, y + px(8), screen.class, scaled(2), MUTED);
  y += px(140);
  for (const label of ["Email", "Password"]) {
    outline(image, margin, y, width - 2 * margin, px(150), scaled(4), GREY);
    text(image, margin + px(32), y + px(50), label, scaled(2), MUTED);
    y += px(190);
  }
  fill(image, margin, y + px(20), width - 2 * margin, px(150), BLUE);
  const button = screen.state === "running" ? "PLEASE WAIT" : "CONTINUE";
  text(image, (width - button.length * GLYPH_WIDTH * scaled(3)) / 2, y + px(59), button, scaled(3), WHITE);
  y += px(240);
  if (screen.state === "failed") {
    // The error, white on red, as large as fits what is left of the screen.
    const columns = Math.floor((width - 2 * margin - px(64)) / (GLYPH_WIDTH * scaled(2)));
    const lineHeight = GLYPH_HEIGHT * scaled(2) + px(8);
    const room = Math.max(1, Math.floor((height - y - px(200)) / lineHeight));
    const lines = wrap(`Test failed: ${screen.message ?? ""}`.trim(), columns).slice(0, room);
    const boxHeight = lines.length * lineHeight + px(64);
    fill(image, margin, y, width - 2 * margin, boxHeight, RED);
    lines.forEach((line, i) => {
      text(image, margin + px(32), y + px(32) + i * lineHeight, line, scaled(2), WHITE);
    });
  }
  return encode(image);
}

/** The whole screen in one colour: what a device shows before the stand-in ran any test on it. */
export function png(width, height, colour) {
  return encode(canvas(width, height, colour));
}
