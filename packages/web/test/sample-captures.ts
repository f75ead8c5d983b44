// What an agent captures at a failure, made up for the sample runs (sample-data.ts): a phone screenshot as a real
// PNG (a checkout screen drawn in plain shapes: no font is at hand here) and the test's logcat lines in
// threadtime format, as the agent cuts them from the device log.
import { crc32, deflateSync } from "node:zlib";

type Rgb = readonly [number, number, number];

function chunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
}

/** An RGB image as a PNG file (8-bit, no interlace, filter 0 on every row). */
function png(width: number, height: number, pixels: Buffer): Buffer {
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.writeUInt8(8, 8); // bit depth
  header.writeUInt8(2, 9); // colour type: RGB
  const rows = Buffer.alloc((width * 3 + 1) * height);
  for (let y = 0; y < height; y++) {
    pixels.copy(rows, y * (width * 3 + 1) + 1, y * width * 3, (y + 1) * width * 3);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", header),
    chunk("IDAT", deflateSync(rows)),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

/**
 * A 360×780 checkout screen: status bar, app bar, three cart lines, a total row in red (the value the test
 * found wrong) and the pay button. Each failure gets its own tint of the app bar, so two screenshots differ.
 */
export function sampleScreenshot(variant = 0): Buffer {
  const [width, height] = [360, 780];
  const pixels = Buffer.alloc(width * height * 3);
  const rect = (x: number, y: number, w: number, h: number, [r, g, b]: Rgb) => {
    for (let row = y; row < Math.min(height, y + h); row++) {
      for (let col = x; col < Math.min(width, x + w); col++) {
        const at = (row * width + col) * 3;
        pixels[at] = r;
        pixels[at + 1] = g;
        pixels[at + 2] = b;
      }
    }
  };
  const grey: Rgb = [214, 219, 226];
  rect(0, 0, width, height, [248, 249, 251]);
  rect(0, 0, width, 28, [31, 41, 55]);
  rect(0, 28, width, 64, variant % 2 === 0 ? [29, 95, 208] : [94, 53, 177]);
  rect(20, 50, 140, 18, [255, 255, 255]);
  for (let line = 0; line < 3; line++) {
    const top = 116 + line * 96;
    rect(16, top, width - 32, 80, [255, 255, 255]);
    rect(28, top + 12, 56, 56, grey);
    rect(100, top + 18, 150, 12, [120, 128, 140]);
    rect(100, top + 42, 90, 10, grey);
    rect(width - 88, top + 30, 60, 14, [120, 128, 140]);
  }
  rect(16, 420, width - 32, 1, grey);
  rect(28, 444, 80, 16, [60, 66, 76]);
  rect(width - 128, 440, 100, 24, [220, 38, 38]);
  rect(16, height - 96, width - 32, 56, [29, 95, 208]);
  rect(width / 2 - 50, height - 76, 100, 16, [255, 255, 255]);
  return png(width, height, pixels);
}

/**
 * The lines of one test, from "started" to "finished", as the agent cuts them from the device log: a failed one
 * with the app's errors and the runner's exception block, a passed one with what it did.
 */
export function sampleLogcat(classname: string, name: string, at: Date, failed = true): string {
  const time = (ms: number) => {
    const t = new Date(at.getTime() + ms);
    const two = (n: number) => String(n).padStart(2, "0");
    return `${two(t.getUTCMonth() + 1)}-${two(t.getUTCDate())} ${two(t.getUTCHours())}:${two(t.getUTCMinutes())}:${two(t.getUTCSeconds())}.${String(t.getUTCMilliseconds()).padStart(3, "0")}`;
  };
  const line = (ms: number, level: string, tag: string, message: string) =>
    `${time(ms)}  4123  4151 ${level} ${tag.padEnd(8)}: ${message}`;
  if (!failed) {
    return [
      line(0, "I", "TestRunner", `started: ${name}(${classname})`),
      line(12, "D", "Checkout", "cart restored: 3 lines"),
      line(300, "I", "TestRunner", `finished: ${name}(${classname})`),
      "",
    ].join("\n");
  }
  return [
    line(0, "I", "TestRunner", `started: ${name}(${classname})`),
    line(12, "D", "Checkout", "cart restored: 3 lines"),
    line(40, "I", "ActivityTaskManager", "Displayed com.example.basic/.CheckoutActivity: +312ms"),
    line(210, "D", "Checkout", "applying VAT rate 0.19 to 35,29 €"),
    line(214, "W", "PriceFormatter", "locale de_DE: rounding mode HALF_EVEN"),
    line(236, "E", "Checkout", "total recomputed before the cart loaded: 0,00 €"),
    line(580, "E", "TestRunner", `failed: ${name}(${classname})`),
    line(580, "E", "TestRunner", "----- begin exception -----"),
    line(
      581,
      "E",
      "TestRunner",
      "java.lang.AssertionError: expected:<Total: 42,00 €> but was:<Total: 0,00 €>",
    ),
    line(581, "E", "TestRunner", "\tat org.junit.Assert.fail(Assert.java:89)"),
    line(581, "E", "TestRunner", `\tat ${classname}.${name}(CheckoutTest.kt:58)`),
    line(582, "E", "TestRunner", "----- end exception -----"),
    line(590, "I", "TestRunner", `finished: ${name}(${classname})`),
    "",
  ].join("\n");
}
