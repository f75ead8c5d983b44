import { describe, expect, it } from "vitest";
import type { Artifact } from "../../api/artifacts.ts";
import type { DeviceRun } from "../../api/types.ts";
import { shardRunName } from "./device-entry-name.ts";
import {
  type DeviceFile,
  deviceFileGroups,
  deviceFileKind,
  type FileFolder,
  fileTree,
} from "./device-files.ts";

const artifact = (name: string, size_bytes: number, at: Partial<Artifact> = {}): Artifact => ({
  name,
  device: 0,
  shard: 0,
  attempt: 1,
  size_bytes,
  sha256: "0".repeat(64),
  content_type: "application/octet-stream",
  created_at: "2026-11-28T13:00:00.000Z",
  url: `/v1/executions/r_1/artifacts/${name}`,
  ...at,
});

/** A tree as its rows read: "label/ (count, bytes)" for folders, the path for files, nested by indentation. */
function outline(folder: FileFolder, depth = 0): string[] {
  const indent = "  ".repeat(depth);
  return [
    ...folder.folders.flatMap((child) => [
      `${indent}${child.label}/ (${child.fileCount}, ${child.bytes})`,
      ...outline(child, depth + 1),
    ]),
    ...folder.files.map((file: DeviceFile) => `${indent}${file.path}`),
  ];
}

describe("deviceFileKind", () => {
  it("tells files copied off the device from captures and logs", () => {
    expect(deviceFileKind("pulled/0/sdcard/allure-results/a-result.json")).toBe("pulled");
    expect(deviceFileKind("coverage/2/testbay-2.ec")).toBe("coverage");
    expect(
      deviceFileKind("device-emulator-5554/screenshots/com.example.LoginTest.signsIn.png"),
    ).toBeUndefined();
    expect(deviceFileKind("device-emulator-5554/pulled/0/x.txt")).toBeUndefined();
    // A folder of its own called "pulled" without a shard and a path is not one.
    expect(deviceFileKind("pulled/x.txt")).toBeUndefined();
    expect(deviceFileKind("coverage.ec")).toBeUndefined();
  });
});

describe("deviceFileGroups", () => {
  const items = [
    artifact("device-R5CT70XYZ1A/logcat/com.example.CartTest.addsItem.txt", 900),
    artifact("pulled/1/sdcard/Pictures/shot-10.png", 30, { shard: 1 }),
    artifact("pulled/1/sdcard/Pictures/shot-2.png", 20, { shard: 1 }),
    artifact("coverage/1/testbay-1.ec", 5000, { shard: 1 }),
    artifact("pulled/0/sdcard/allure-results/b.json", 7),
    artifact("pulled/0/sdcard/allure-results/a.json", 3),
    artifact("pulled/0/sdcard/allure-results/a.json", 4, { attempt: 2 }),
    artifact("coverage/0/testbay-0.ec", 4000, { device: 1 }),
  ];

  it("groups pulled files by device entry, shard and attempt, each by its device path, with their size", () => {
    const groups = deviceFileGroups(items, "pulled");
    expect(
      groups.map((group) => ({
        at: [group.device, group.shard, group.attempt],
        paths: group.files.map((file) => file.path),
        bytes: group.bytes,
      })),
    ).toEqual([
      { at: [0, 0, 1], paths: ["/sdcard/allure-results/a.json", "/sdcard/allure-results/b.json"], bytes: 10 },
      { at: [0, 0, 2], paths: ["/sdcard/allure-results/a.json"], bytes: 4 },
      // Numbers in names in their order: shot-2 before shot-10.
      { at: [0, 1, 1], paths: ["/sdcard/Pictures/shot-2.png", "/sdcard/Pictures/shot-10.png"], bytes: 50 },
    ]);
    // Each file keeps its artifact: the download link needs its name, device, shard and attempt.
    expect(groups[2]?.files[0]?.artifact.name).toBe("pulled/1/sdcard/Pictures/shot-2.png");
  });

  it("keeps coverage files apart, by their names, and has no group where there are none", () => {
    const groups = deviceFileGroups(items, "coverage");
    expect(groups.map((group) => [group.device, group.shard, group.files.map((file) => file.path)])).toEqual([
      [0, 1, ["testbay-1.ec"]],
      [1, 0, ["testbay-0.ec"]],
    ]);
    expect(deviceFileGroups([items[0] as Artifact], "pulled")).toEqual([]);
    expect(deviceFileGroups([], "coverage")).toEqual([]);
  });
});

describe("fileTree", () => {
  const files = (names: [string, number][]) =>
    deviceFileGroups(
      names.map(([name, size]) => artifact(name, size)),
      names[0]?.[0].startsWith("coverage/") ? "coverage" : "pulled",
    )[0]?.files ?? [];

  it("lists folders, then files, compacting folders that only hold one folder, with counts and sizes", () => {
    const tree = fileTree(
      files([
        ["pulled/0/sdcard/allure-results/b-result.json", 200],
        ["pulled/0/sdcard/allure-results/a-result.json", 100],
        ["pulled/0/sdcard/allure-results/attachments/shot.png", 1000],
        ["pulled/0/sdcard/Download/reports/junit/TEST-LoginTest.xml", 50],
        ["pulled/0/sdcard/trace.txt", 5],
        ["pulled/0/data/local/tmp/screenshots/home.png", 70],
      ]),
    );
    expect(outline(tree)).toEqual([
      "/data/local/tmp/screenshots/ (1, 70)",
      "  /data/local/tmp/screenshots/home.png",
      "/sdcard/ (5, 1355)",
      "  allure-results/ (3, 1300)",
      "    attachments/ (1, 1000)",
      "      /sdcard/allure-results/attachments/shot.png",
      "    /sdcard/allure-results/a-result.json",
      "    /sdcard/allure-results/b-result.json",
      "  Download/reports/junit/ (1, 50)",
      "    /sdcard/Download/reports/junit/TEST-LoginTest.xml",
      "  /sdcard/trace.txt",
    ]);
    expect(tree.fileCount).toBe(6);
    expect(tree.bytes).toBe(1425);
  });

  it("shows one pulled folder as its whole device path", () => {
    const tree = fileTree(
      files([
        ["pulled/0/sdcard/Android/data/com.example.app/files/allure-results/x.json", 3],
        ["pulled/0/sdcard/Android/data/com.example.app/files/allure-results/y.json", 4],
      ]),
    );
    expect(outline(tree)).toEqual([
      "/sdcard/Android/data/com.example.app/files/allure-results/ (2, 7)",
      "  /sdcard/Android/data/com.example.app/files/allure-results/x.json",
      "  /sdcard/Android/data/com.example.app/files/allure-results/y.json",
    ]);
  });

  it("lists coverage files, which are names only, at the top", () => {
    const tree = fileTree(
      files([
        ["coverage/0/com.example.LoginTest#signsIn.ec", 10],
        ["coverage/0/com.example.CartTest#addsItem.ec", 20],
      ]),
    );
    expect(outline(tree)).toEqual(["com.example.CartTest#addsItem.ec", "com.example.LoginTest#signsIn.ec"]);
    expect(tree.folders).toEqual([]);
  });
});

describe("shardRunName", () => {
  const run = (shard: number, attempt: number, serial: string | null): DeviceRun => ({
    device: { platform: "android", model: "Pixel 8", os_version: "14" },
    shard,
    status: "passed",
    attempt,
    reason: null,
    summary: null,
    agent_id: "lab-rack-2",
    claimed_device: serial ? { serial, model: "Pixel 8", os_version: "14" } : null,
    started_at: null,
    finished_at: null,
    steps: [],
    shards_planned: null,
    setup_ms: null,
  });
  const sharded = [run(0, 1, "R5CT70XYZ1A"), run(1, 2, "R5CT70XYZ2B"), run(2, 1, null)];

  it("names a shard by the device it ran on and its place among the entry's shards", () => {
    expect(shardRunName(sharded, 0, 0, 1)).toBe("Pixel 8 · 14 · R5CT70XYZ1A · shard 1 of 3");
    expect(shardRunName(sharded, 0, 2, 1)).toBe("Pixel 8 · 14 · shard 3 of 3");
  });

  it("names a later attempt, and an earlier one by what the plan asked (its device may have been another)", () => {
    expect(shardRunName(sharded, 0, 1, 2)).toBe("Pixel 8 · 14 · R5CT70XYZ2B · shard 2 of 3 · attempt 2");
    expect(shardRunName(sharded, 0, 1, 1)).toBe("Pixel 8 · 14 · shard 2 of 3");
  });

  it("says no shard for an entry that is not sharded, and a position for one not loaded", () => {
    expect(shardRunName([run(0, 1, "emulator-5554")], 0, 0, 1)).toBe("Pixel 8 · 14 · emulator-5554");
    expect(shardRunName([], 1, 0, 1)).toBe("device 2");
  });
});
