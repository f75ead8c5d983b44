import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { createDeviceLab, type DeviceLab } from "./device-lab.ts";
import { run } from "./run.ts";

const APP = fileURLToPath(new URL("../../../server/test/fixtures/binaries/app-basic.apk", import.meta.url));
const S = "emulator-5554";

let lab: DeviceLab;
afterEach(() => lab?.cleanup());

function flows(files: Record<string, string>) {
  const dir = mkdtempSync(join(tmpdir(), "stand-in-flows-"));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const LOGIN =
  // biome-ignore lint/suspicious/noTemplateCurlyInString: maestro's own ${} placeholder, read by the flow
  'appId: ${APP_ID}\nname: Login\n---\n- launchApp\n- tapOn: "Sign in"\n- assertVisible: "Welcome"\n';

describe("maestro test", () => {
  it("cannot launch an app that is not installed, and can once adb installed it", async () => {
    lab = await createDeviceLab({ devices: [{ serial: S, model: "Pixel 7" }], timeScale: 0.01 });
    const dir = flows({ "login.yaml": LOGIN });
    const report = join(dir, "report.xml");
    const args = [
      "--device",
      S,
      "test",
      "--format",
      "junit",
      "--output",
      report,
      "-e",
      "APP_ID=com.example.basic",
      dir,
    ];

    const before = await run(lab, "maestro", args);
    expect(before.code).toBe(1);
    expect(before.stdout).toContain("[Failed] Login");
    expect(before.stdout).toContain("Unable to launch app com.example.basic");
    const failed = readFileSync(report, "utf8");
    expect(failed).toMatch(
      /^<\?xml version='1\.0' encoding='UTF-8'\?>\n<testsuites>\n {2}<testsuite name="Test Suite" device="emulator-5554" tests="1" failures="1" /,
    );
    expect(failed).toMatch(
      /<testcase id="Login" name="Login" classname="Login" [^>]*status="ERROR">\n\s*<failure>Unable to launch app com\.example\.basic<\/failure>/,
    );

    expect((await run(lab, "adb", ["-s", S, "install", APP])).code).toBe(0);
    const after = await run(lab, "maestro", args);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain("1/1 Flow Passed");
    expect(readFileSync(report, "utf8")).toMatch(
      /tests="1" failures="0"[\s\S]*<testcase id="Login" [^>]*status="SUCCESS"\/>/,
    );
  });

  it("fails an assertVisible of a FAIL… text and reports each flow of a directory", async () => {
    lab = await createDeviceLab({ devices: [{ serial: S }], timeScale: 0.01 });
    await run(lab, "adb", ["install", APP]);
    const dir = flows({
      "01-login.yaml": LOGIN,
      "02-checkout.yml":
        'appId: com.example.basic\n---\n- launchApp\n- assertVisible: "FAIL Order confirmed"\n',
      "notes.txt": "not a flow",
    });
    const report = join(dir, "out.xml");
    const ran = await run(lab, "maestro", [
      "test",
      "--format",
      "junit",
      "--output",
      report,
      "-e",
      "APP_ID=com.example.basic",
      dir,
    ]);
    expect(ran.code).toBe(1);
    const xml = readFileSync(report, "utf8");
    expect(xml).toContain('tests="2" failures="1"');
    expect(xml).toContain(
      "<failure>Assertion is false: &quot;FAIL Order confirmed&quot; is visible</failure>",
    );
    expect(xml).toContain('id="02-checkout"');
    expect(ran.stdout).toContain("1/2 Flow Failed");
  });

  it("substitutes the flow's placeholders from -e KEY=VALUE, so a wrong APP_ID is what fails to launch", async () => {
    lab = await createDeviceLab({ devices: [{ serial: S }], timeScale: 0.01 });
    await run(lab, "adb", ["install", APP]);
    const dir = flows({ "login.yaml": LOGIN });
    const ran = await run(lab, "maestro", ["test", "-e", "APP_ID=com.example.other", dir]);
    expect(ran.code).toBe(1);
    expect(ran.stdout).toContain("Unable to launch app com.example.other");
  });

  it("fails an assertVisible of a 'FAIL 2x …' text on the flow's first two runs on a device only", async () => {
    lab = await createDeviceLab({ devices: [{ serial: S }], timeScale: 0.01 });
    await run(lab, "adb", ["install", APP]);
    const dir = flows({
      // biome-ignore lint/suspicious/noTemplateCurlyInString: maestro's own ${} placeholder, read by the flow
      "cart.yaml": 'appId: ${APP_ID}\nname: Cart\n---\n- launchApp\n- assertVisible: "FAIL 2x Cart shown"\n',
    });
    const codes: Array<number | null> = [];
    for (let i = 0; i < 3; i++) {
      codes.push(
        (await run(lab, "maestro", ["--device", S, "test", "-e", "APP_ID=com.example.basic", dir])).code,
      );
    }
    expect(codes).toEqual([1, 1, 0]);
    expect(lab.testRuns(S)).toEqual({ "flow:Cart": 3 });
  });

  it("needs a connected device and records its calls", async () => {
    lab = await createDeviceLab({ devices: [{ serial: S }] });
    const dir = flows({ "login.yaml": LOGIN });
    lab.unplug(S);
    const ran = await run(lab, "maestro", ["--device", S, "test", dir]);
    expect(ran).toMatchObject({ code: 1, stderr: `Device ${S} was requested, but it is not connected.\n` });
    expect(lab.calls()).toEqual([
      expect.objectContaining({ tool: "maestro", serial: S, argv: ["--device", S, "test", dir] }),
    ]);
  });
});
