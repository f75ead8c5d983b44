// Real captures for the screenshots' sample run, made in the browser the script already drives (no ffmpeg, no
// download): the failure's screenshot is a checkout screen drawn on a canvas, and the video segment is that
// canvas animated and recorded as MP4 by the browser's MediaRecorder, with the failures at known offsets.
import type { Browser } from "playwright-core";
import type { SampleCaptures } from "../test/sample-data.ts";

/** Seconds recorded: short, since it records in real time; the failures happen at 4.6 s and 9.2 s of it. */
const seconds = 12;
const failuresMs = [4_600, 9_200];

/**
 * Draws frame `t` (ms) of the sample app's checkout screen: the cart, its total (wrong, in red, once the test
 * reached it), the pay button, and a touch marker moving as a test would tap. Runs in the page.
 */
function drawCheckout(canvas: HTMLCanvasElement, t: number, failures: number[], variant: number) {
  const g = canvas.getContext("2d");
  if (!g) return;
  const { width, height } = canvas;
  g.fillStyle = "#f8f9fb";
  g.fillRect(0, 0, width, height);
  g.fillStyle = "#1f2937";
  g.fillRect(0, 0, width, 28);
  g.fillStyle = "#ffffff";
  g.font = "13px sans-serif";
  g.fillText(`10:4${Math.floor(t / 60_000)}`, 14, 19);
  g.fillStyle = variant === 0 ? "#1d5fd0" : "#5e35b1";
  g.fillRect(0, 28, width, 64);
  g.fillStyle = "#ffffff";
  g.font = "bold 20px sans-serif";
  g.fillText("Checkout", 20, 68);
  const lines = [
    ["Coffee beans 1 kg", "18,90 €"],
    ["Milk frother", "12,40 €"],
    ["Paper filters ×100", "3,99 €"],
  ];
  lines.forEach(([name, price], i) => {
    const top = 116 + i * 96;
    g.fillStyle = "#ffffff";
    g.fillRect(16, top, width - 32, 80);
    g.fillStyle = "#d6dbe2";
    g.fillRect(28, top + 12, 56, 56);
    g.fillStyle = "#1f2937";
    g.font = "16px sans-serif";
    g.fillText(name ?? "", 100, top + 34);
    g.fillStyle = "#5a6372";
    g.font = "14px sans-serif";
    g.fillText("Qty 1", 100, top + 58);
    g.fillStyle = "#1f2937";
    g.font = "bold 16px sans-serif";
    g.fillText(price ?? "", width - 96, top + 46);
  });
  g.fillStyle = "#d6dbe2";
  g.fillRect(16, 420, width - 32, 1);
  const failed = failures.some((at) => t >= at - 400 && t < at + 1_600);
  g.fillStyle = "#1f2937";
  g.font = "bold 18px sans-serif";
  g.fillText("Total", 28, 458);
  g.fillStyle = failed ? "#dc2626" : "#1f2937";
  g.fillText(failed ? "0,00 €" : "42,00 €", width - 110, 458);
  g.fillStyle = "#1d5fd0";
  g.fillRect(16, height - 96, width - 32, 56);
  g.fillStyle = "#ffffff";
  g.font = "bold 18px sans-serif";
  g.fillText("Pay 42,00 €", width / 2 - 52, height - 61);
  // The test's finger: it moves down the cart and taps "Pay" every 4.6 s.
  const phase = (t % 4_600) / 4_600;
  g.beginPath();
  g.arc(width / 2 + Math.sin(phase * 6.28) * 90, 160 + phase * (height - 260), 18, 0, 6.28);
  g.fillStyle = "rgba(29, 95, 208, 0.35)";
  g.fill();
  g.fillStyle = "#5a6372";
  g.font = "12px monospace";
  g.fillText(`${(t / 1000).toFixed(1)} s`, width - 60, height - 12);
}

/** A PNG of the checkout screen as it looked at each failure, and a 12 s MP4 with the failures in it. */
export async function recordSampleCaptures(browser: Browser): Promise<SampleCaptures> {
  const page = await browser.newPage({ viewport: { width: 360, height: 780 }, deviceScaleFactor: 1 });
  try {
    await page.setContent('<canvas width="360" height="780" style="display:block"></canvas>');
    // tsx keeps functions' names with a __name(fn, "name") helper that the page does not have: a no-op stands in.
    await page.evaluate("window.__name = (fn) => fn");
    const draw = drawCheckout.toString();
    const shots: Buffer[] = [];
    for (const [variant, at] of failuresMs.entries()) {
      await page.evaluate(
        ({ draw, at, failures, variant }) => {
          const canvas = document.querySelector("canvas") as HTMLCanvasElement;
          new Function("canvas", "t", "failures", "variant", `(${draw})(canvas, t, failures, variant)`)(
            canvas,
            at,
            failures,
            variant,
          );
        },
        { draw, at, failures: failuresMs, variant },
      );
      shots.push(await page.locator("canvas").screenshot());
    }
    const base64 = await page.evaluate(
      async ({ draw, seconds, failures }) => {
        const canvas = document.querySelector("canvas") as HTMLCanvasElement;
        const paint = new Function(
          "canvas",
          "t",
          "failures",
          "variant",
          `(${draw})(canvas, t, failures, variant)`,
        );
        const recorder = new MediaRecorder(canvas.captureStream(15), { mimeType: "video/mp4;codecs=avc1" });
        const parts: Blob[] = [];
        recorder.ondataavailable = (event) => parts.push(event.data);
        const stopped = new Promise((resolve) => {
          recorder.onstop = resolve;
        });
        const start = performance.now();
        recorder.start();
        await new Promise<void>((resolve) => {
          const frame = () => {
            const t = performance.now() - start;
            paint(canvas, t, failures, 0);
            if (t < seconds * 1000) requestAnimationFrame(frame);
            else resolve();
          };
          frame();
        });
        recorder.stop();
        await stopped;
        const bytes = new Uint8Array(await new Blob(parts, { type: "video/mp4" }).arrayBuffer());
        let binary = "";
        for (let i = 0; i < bytes.length; i += 0x8000) {
          binary += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
        }
        return btoa(binary);
      },
      { draw, seconds, failures: failuresMs },
    );
    return {
      screenshot: (variant) => shots[variant % shots.length] ?? (shots[0] as Buffer),
      video: { mp4: Buffer.from(base64, "base64"), offsetsMs: failuresMs },
    };
  } finally {
    await page.close();
  }
}
