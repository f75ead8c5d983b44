// What the demo lab of docs/android.md offers a newcomer: three phones for shards side by side, a flaky test that a
// rerun shows as flaky, failure screenshots that show the failure, and recordings a browser plays.
import { fileURLToPath } from "node:url";
import { inflateSync } from "node:zlib";
import type { Browser } from "playwright-core";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { launchChromium } from "../../../web/test/browser.ts";
import { createDemoLab } from "./demo-lab.ts";
import type { DeviceLab } from "./device-lab.ts";
import { run } from "./run.ts";

const BINARIES = fileURLToPath(new URL("../../../server/test/fixtures/binaries/", import.meta.url));
const COMPONENT = "com.example.basic.test/androidx.test.runner.AndroidJUnitRunner";
const PIXEL_7 = "2B121FDH200A7Q";

let lab: DeviceLab;
afterEach(() => lab?.cleanup());

async function installed(serial: string) {
  for (const apk of ["app-basic.apk", "app-basic-androidTest.apk"]) {
    expect(
      (await run(lab, "adb", ["-s", serial, "install", "-r", "-t", "-g", `${BINARIES}${apk}`])).code,
    ).toBe(0);
  }
}

async function instrument(serial: string, test: string) {
  const ran = await run(lab, "adb", [
    "-s",
    serial,
    "shell",
    "am",
    "instrument",
    "-w",
    "-r",
    "-e",
    "class",
    test,
    COMPONENT,
  ]);
  expect(ran.code).toBe(0);
  return ran.stdout.includes("INSTRUMENTATION_STATUS_CODE: -2") ? "fail" : "pass";
}

/** The pixels of an 8-bit RGB PNG with filter 0 on every row, as screencap.mjs writes it. */
function decode(png: Buffer) {
  const width = png.readUInt32BE(16);
  const height = png.readUInt32BE(20);
  const idats: Buffer[] = [];
  for (let at = 8; at < png.length; ) {
    const length = png.readUInt32BE(at);
    if (png.toString("latin1", at + 4, at + 8) === "IDAT") idats.push(png.subarray(at + 8, at + 8 + length));
    at += 12 + length;
  }
  const raw = inflateSync(Buffer.concat(idats));
  const pixel = (x: number, y: number) => {
    const at = y * (1 + width * 3) + 1 + x * 3;
    return [raw[at], raw[at + 1], raw[at + 2]];
  };
  return { width, height, pixel };
}

/** How many rows of column x are the error box's red (179, 38, 30). */
function redRows(image: ReturnType<typeof decode>, x: number) {
  let rows = 0;
  for (let y = 0; y < image.height; y++) if (image.pixel(x, y).join() === "179,38,30") rows++;
  return rows;
}

describe("the demo lab", () => {
  it("lists three phones on USB, as adb devices -l shows physical devices", async () => {
    lab = await createDemoLab(0.01);
    expect((await run(lab, "adb", ["devices", "-l"])).stdout).toBe(
      "List of devices attached\n" +
        "2B121FDH200A7Q         device usb:1-1 product:panther model:Pixel_7 device:panther transport_id:1\n" +
        "37111FDJH004ZN         device usb:1-2 product:shiba model:Pixel_8 device:shiba transport_id:2\n" +
        "R5CW30MZ4KX            device usb:1-3 product:dm1qxxx model:SM-S911B device:dm1q transport_id:3\n\n",
    );
  });

  it("has a flaky test: after each install of the app its first run fails, its reruns pass", async () => {
    lab = await createDemoLab(0.01);
    await installed(PIXEL_7);
    await installed("R5CW30MZ4KX");
    const checksOut = "com.example.basic.CartTest#checksOut";
    const runs = async (serial: string, n: number) => {
      const outcomes: string[] = [];
      for (let i = 0; i < n; i++) outcomes.push(await instrument(serial, checksOut));
      return outcomes;
    };
    expect(await runs(PIXEL_7, 3)).toEqual(["fail", "pass", "pass"]);
    expect(await runs("R5CW30MZ4KX", 1)).toEqual(["fail"]);
    // The agent installs the app at the start of each run: the next run's first try fails again.
    await installed(PIXEL_7);
    expect(await runs(PIXEL_7, 2)).toEqual(["fail", "pass"]);
    expect(lab.testRuns(PIXEL_7)).toEqual({ [checksOut]: 5 });
  });

  it("shows the app screen a failing test left, with its name and its error, in the failure's screenshot", async () => {
    lab = await createDemoLab(0.01);
    await installed(PIXEL_7);
    const screencap = async () =>
      (await run(lab, "adb", ["-s", PIXEL_7, "exec-out", "screencap", "-p"])).bytes;
    const home = decode(await screencap());
    expect(redRows(home, 540)).toBe(0);

    expect(await instrument(PIXEL_7, "com.example.basic.LoginTest#rejectsBadPassword")).toBe("fail");
    const login = await screencap();
    const image = decode(login);
    expect([image.width, image.height]).toEqual([1080, 2400]);
    expect(image.pixel(540, 200)).toEqual([32, 96, 160]); // the app bar
    expect(redRows(image, 540)).toBeGreaterThan(100); // the error box

    expect(await instrument(PIXEL_7, "com.example.basic.CartTest#checksOut")).toBe("fail");
    const cart = await screencap();
    expect(cart.equals(login)).toBe(false);
    // The Espresso message is longer than the assertion's: its box takes more rows.
    expect(redRows(decode(cart), 540)).toBeGreaterThan(redRows(image, 540));
  });
});

describe("a screenrecord segment of the stand-in", () => {
  let browser: Browser;
  beforeAll(async () => {
    browser = await launchChromium();
  });
  afterAll(() => browser?.close());

  it("is an H.264 MP4 that Chromium plays through, as long as it recorded", async () => {
    lab = await createDemoLab();
    // --time-limit 2 at time scale 1: it stops by itself after 2 s, writing its index, as at SIGINT.
    const recorded = await run(lab, "adb", [
      "-s",
      PIXEL_7,
      "shell",
      "screenrecord",
      "--time-limit",
      "2",
      "/sdcard/a.mp4",
    ]);
    expect(recorded.code).toBe(0);
    const mp4 = lab.files(PIXEL_7)["/sdcard/a.mp4"];
    if (!mp4) throw new Error("no recording on the device");
    const page = await browser.newPage();
    try {
      await page.setContent("<video muted></video>");
      const played = await page.evaluate(async (base64) => {
        // This runs in the page; the repository's TypeScript has no DOM types, hence the element's shape here.
        interface Video {
          src: string;
          duration: number;
          videoWidth: number;
          videoHeight: number;
          playbackRate: number;
          error: { code: number; message: string } | null;
          play(): Promise<void>;
          addEventListener(type: string, listener: () => void): void;
        }
        const page = globalThis as unknown as { document: { querySelector(selector: string): Video | null } };
        const video = page.document.querySelector("video");
        if (!video) throw new Error("no video element");
        const outcome = new Promise<string>((resolve) => {
          video.addEventListener("error", () =>
            resolve(`error ${video.error?.code}: ${video.error?.message}`),
          );
          video.addEventListener("ended", () => resolve("ended"));
        });
        const metadata = new Promise<void>((resolve) => {
          video.addEventListener("loadedmetadata", () => resolve());
          video.addEventListener("error", () => resolve());
        });
        video.src = `data:video/mp4;base64,${base64}`;
        await metadata;
        video.playbackRate = 4;
        await video.play().catch(() => undefined);
        const end = await outcome;
        return { end, duration: video.duration, width: video.videoWidth, height: video.videoHeight };
      }, mp4.toString("base64"));
      expect(played.end).toBe("ended");
      expect(played.duration).toBeGreaterThanOrEqual(2);
      expect([played.width, played.height]).toEqual([540, 1200]);
    } finally {
      await page.close();
    }
  });
});
