import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { cutLogcat, cutLogcatRuns, testKey } from "./logcat-cut.ts";

// Lines in logcat's threadtime format, with AndroidJUnitRunner's own markers around each test.
const log = [
  "11-24 00:10:01.000  4321  4350 I TestRunner: run started: 3 tests",
  "11-24 00:10:01.010  4321  4350 I TestRunner: started: signsIn(com.example.LoginTest)",
  "11-24 00:10:01.200  4321  4321 D Login   : form shown",
  "11-24 00:10:01.300  4321  4350 I TestRunner: finished: signsIn(com.example.LoginTest)",
  "11-24 00:10:01.310  4321  4350 I TestRunner: started: rejects[pw=(empty)](com.example.LoginTest)",
  "11-24 00:10:01.400  4321  4321 W Login   : bad password",
  "11-24 00:10:01.500  4321  4350 E TestRunner: failed: rejects[pw=(empty)](com.example.LoginTest)",
  "11-24 00:10:01.510  4321  4350 I TestRunner: finished: rejects[pw=(empty)](com.example.LoginTest)",
  "11-24 00:10:01.520  4321  4350 I TestRunner: started: addsItem(com.example.CartTest)",
  "11-24 00:10:01.600  4321  4321 E AndroidRuntime: FATAL EXCEPTION: main",
  "11-24 00:10:01.601  4321  4321 E AndroidRuntime: java.lang.IllegalStateException: cart",
];

let dir: string | undefined;
afterEach(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function cut(wanted: string[]) {
  dir = await mkdtemp(join(tmpdir(), "logcat-cut-"));
  const file = join(dir, "logcat.txt");
  await writeFile(file, `${log.join("\n")}\n`);
  return cutLogcat(file, new Set(wanted));
}

describe("cutLogcat", () => {
  it("gives a test the lines between its started and finished markers, and nothing of the others", async () => {
    const key = testKey("com.example.LoginTest", "rejects[pw=(empty)]");
    const parts = await cut([key]);
    expect(parts.get(key)).toEqual(log.slice(4, 8));
    expect(parts.size).toBe(1);
  });

  it("runs a test that crashed the process to the end of the log, where the crash is", async () => {
    const key = testKey("com.example.CartTest", "addsItem");
    expect((await cut([key])).get(key)).toEqual(log.slice(8));
  });

  it("has nothing for a test whose markers are not in the log", async () => {
    expect((await cut([testKey("com.example.Other", "x")])).size).toBe(0);
  });

  it("keeps each run of a test that ran again alone apart, in the order they ran", async () => {
    dir = await mkdtemp(join(tmpdir(), "logcat-cut-"));
    const file = join(dir, "logcat.txt");
    const rerun = [
      "11-24 00:10:02.000  4400  4410 I TestRunner: run started: 1 tests",
      "11-24 00:10:02.010  4400  4410 I TestRunner: started: rejects[pw=(empty)](com.example.LoginTest)",
      "11-24 00:10:02.020  4400  4400 W Login   : second try",
      "11-24 00:10:02.030  4400  4410 I TestRunner: finished: rejects[pw=(empty)](com.example.LoginTest)",
    ];
    await writeFile(file, `${[...log, ...rerun].join("\n")}\n`);
    const key = testKey("com.example.LoginTest", "rejects[pw=(empty)]");
    const runs = await cutLogcatRuns(file, new Set([key]));
    expect(runs.get(key)).toEqual([log.slice(4, 8), rerun.slice(1)]);
    expect((await cutLogcat(file, new Set([key]))).get(key)).toEqual(rerun.slice(1));
  });
});
