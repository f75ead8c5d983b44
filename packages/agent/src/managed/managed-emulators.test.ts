import { describe, expect, it } from "vitest";
import { consoleRefusal } from "./emulator-adb.ts";
import { mergeEmulatorRequests, parseEmulatorOption, parseLabelOption } from "./emulator-option.ts";
import { emulatorPort, pickPorts } from "./emulator-ports.ts";
import { emulatorArgs } from "./emulator-process.ts";
import { LastLines } from "./last-lines.ts";
import { RestartBudget } from "./restart-budget.ts";

// The pure parts of --emulator (API.md §13); the whole is tested on the stand-ins in
// test/managed-emulators.int.test.ts.

describe("--emulator and --label", () => {
  it("reads AVD[=N], one instance unless told, and adds up an AVD named twice", () => {
    expect(parseEmulatorOption("Pixel_7_API_34")).toEqual({ avd: "Pixel_7_API_34", instances: 1 });
    expect(parseEmulatorOption("Pixel_7_API_34=3")).toEqual({ avd: "Pixel_7_API_34", instances: 3 });
    expect(
      mergeEmulatorRequests([
        { avd: "A", instances: 2 },
        { avd: "B", instances: 1 },
        { avd: "A", instances: 1 },
      ]),
    ).toEqual([
      { avd: "A", instances: 3 },
      { avd: "B", instances: 1 },
    ]);
  });

  it("refuses a bad name or count, saying what to write", () => {
    expect(() => parseEmulatorOption("Pixel 7")).toThrow(/name an AVD .*Pixel_7_API_34=3/);
    expect(() => parseEmulatorOption("A=0")).toThrow(/whole number from 1 to 16/);
    expect(() => parseEmulatorOption("A=x")).toThrow(/whole number/);
    expect(() => parseEmulatorOption("=2")).toThrow(/name an AVD/);
  });

  it("reads labels as KEY=VALUE and refuses anything else", () => {
    expect(parseLabelOption("team=payments")).toEqual(["team", "payments"]);
    expect(parseLabelOption("gpu=")).toEqual(["gpu", ""]);
    expect(() => parseLabelOption("team")).toThrow(/KEY=VALUE/);
    expect(() => parseLabelOption("team=a b")).toThrow(/KEY=VALUE/);
  });
});

describe("emulator command line and ports", () => {
  it("starts instances headless, read-only beside others, from the clean snapshot, or wiped", () => {
    expect(emulatorArgs({ avd: "A", port: 5556, readOnly: true, snapshot: "testbay-clean" })).toEqual([
      "-avd",
      "A",
      "-port",
      "5556",
      "-no-window",
      "-no-audio",
      "-no-boot-anim",
      "-read-only",
      "-snapshot",
      "testbay-clean",
      "-no-snapshot-save",
    ]);
    const wiped = emulatorArgs({
      avd: "A",
      port: 5554,
      readOnly: false,
      snapshot: "testbay-clean",
      wipeData: true,
    });
    expect(wiped).toContain("-wipe-data");
    expect(wiped).not.toContain("-snapshot");
    expect(wiped).not.toContain("-read-only");
  });

  it("picks even ports from 5554, skipping those other emulators hold", () => {
    expect(pickPorts(3, [5556])).toEqual([5554, 5558, 5560]);
    expect(() => pickPorts(66, [])).toThrow(/no free emulator ports/);
    expect(emulatorPort("emulator-5584")).toBe(5584);
    expect(emulatorPort("2B121FDH200A7Q")).toBeNull();
  });

  it("reads the console's reply: OK, or the KO line, whatever adb's exit status", () => {
    expect(consoleRefusal({ ok: true, stdout: "OK\n", text: "OK" })).toBeNull();
    const ko = "KO: Snapshot save is not supported in read-only mode (-read-only)";
    expect(consoleRefusal({ ok: true, stdout: `${ko}\n`, text: ko })).toBe(ko);
    expect(consoleRefusal({ ok: false, stdout: "", text: "adb: device 'emulator-5554' not found" })).toBe(
      "adb: device 'emulator-5554' not found",
    );
  });
});

describe("RestartBudget", () => {
  it("allows three restarts in an hour: four launches in all, then no more within that hour", () => {
    const budget = new RestartBudget();
    budget.launched();
    expect([0, 1, 2, 3].map((i) => budget.takeRestart(i * 1000))).toEqual([true, true, true, false]);
    expect(budget.used).toBe(4);
  });

  it("counts restarts within the last hour only: one a day is mended every day", () => {
    const day = 24 * 3_600_000;
    const daily = new RestartBudget();
    daily.launched();
    expect([1, 2, 3, 4, 5].map((d) => daily.takeRestart(d * day))).toEqual([true, true, true, true, true]);
    const budget = new RestartBudget(3);
    budget.launched();
    for (let i = 0; i < 3; i++) expect(budget.takeRestart(i)).toBe(true);
    expect(budget.takeRestart(3_599_999)).toBe(false);
    expect(budget.takeRestart(3_600_000)).toBe(true);
  });
});

describe("LastLines", () => {
  it("keeps the last lines of output split across chunks, blank lines left out", () => {
    const lines = new LastLines(2);
    lines.write("INFO    | one\nINFO    | tw");
    lines.write("o\n\nFATAL   | three\r\n");
    expect(lines.text()).toBe("INFO    | two\nFATAL   | three");
    lines.write("half a line");
    expect(lines.text()).toBe("INFO    | two\nFATAL   | three\nhalf a line");
    expect(lines.text(11)).toBe("half a line");
  });
});
