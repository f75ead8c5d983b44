// Sets up stand-in Android devices for trying the Android walkthrough (docs/android.md) on a machine without one:
// `eval "$(npx tsx packages/agent/test/stand-ins/demo-lab.ts)"` in the shell that starts the agent puts the
// stand-in adb first on PATH with three phones (a Pixel 7, a Pixel 8 and a Galaxy S23, as `adb devices -l`
// lists them over USB), so a plan with `shards: 2` or 3 runs its shards side by side (the agent runs one job per
// device). Their test package com.example.basic.test holds five tests: two pass, one fails every time, one is
// flaky (its first run after the app is installed fails, a rerun passes; the agent installs the app at the start
// of each run, so `retry_failed_tests` shows it as flaky every time), one is ignored. A failure's screenshot shows the app screen with the test's name and its error; recordings are a
// real H.264 MP4 that browsers play. It stands in for devices; nothing here talks to a real one.
import { pathToFileURL } from "node:url";
import { createDeviceLab, type DeviceLab, type DeviceSpec, type Suite } from "./device-lab.ts";

export const DEMO_DEVICES: DeviceSpec[] = [
  {
    serial: "2B121FDH200A7Q",
    model: "Pixel 7",
    product: "panther",
    device: "panther",
    release: "14",
    sdk: 34,
    abis: ["arm64-v8a"],
    usb: "1-1",
    screen: [1080, 2400],
  },
  {
    serial: "37111FDJH004ZN",
    model: "Pixel 8",
    product: "shiba",
    device: "shiba",
    release: "15",
    sdk: 35,
    abis: ["arm64-v8a"],
    usb: "1-2",
    screen: [1080, 2400],
  },
  {
    serial: "R5CW30MZ4KX",
    model: "SM-S911B",
    manufacturer: "samsung",
    product: "dm1qxxx",
    device: "dm1q",
    release: "14",
    sdk: 34,
    abis: ["arm64-v8a", "armeabi-v7a", "armeabi"],
    usb: "1-3",
    screen: [1080, 2340],
  },
];

const rejectsBadPassword = `java.lang.AssertionError: expected:<Welcome> but was:<Sign in>
\tat org.junit.Assert.fail(Assert.java:89)
\tat com.example.basic.LoginTest.rejectsBadPassword(LoginTest.kt:42)`;

// The usual Espresso flake: the app's first start after an install is slow (a cold start), the check gives up.
const checksOut = `androidx.test.espresso.base.RootViewPicker$RootViewWithoutFocusException: Waited for the root of the view hierarchy to have window focus and not request layout for 10 seconds.
\tat androidx.test.espresso.base.RootViewPicker.waitForRootToBeReady(RootViewPicker.java:296)
\tat com.example.basic.CartTest.checksOut(CartTest.kt:57)`;

export const DEMO_SUITE: Suite = {
  tests: [
    {
      class: "com.example.basic.LoginTest",
      method: "signsIn",
      outcome: "pass",
      duration_ms: 1500,
      logcat: ["D/Login: form shown"],
    },
    {
      class: "com.example.basic.LoginTest",
      method: "rejectsBadPassword",
      outcome: "fail",
      duration_ms: 2000,
      stack: rejectsBadPassword,
      logcat: ["W/Login: bad password"],
    },
    { class: "com.example.basic.CartTest", method: "addsItem", outcome: "pass", duration_ms: 1200 },
    {
      class: "com.example.basic.CartTest",
      method: "checksOut",
      outcomes: ["fail", "pass"],
      sinceInstall: true,
      duration_ms: 1800,
      stack: checksOut,
      logcat: ["D/Cart: payment sheet opening"],
    },
    { class: "com.example.basic.CartTest", method: "remembersCart", outcome: "ignored" },
  ],
};

/** The demo lab; `timeScale` as in createDeviceLab (its tests shorten the tests' device time). */
export function createDemoLab(timeScale = 1): Promise<DeviceLab> {
  return createDeviceLab({
    devices: DEMO_DEVICES,
    suites: { "com.example.basic.test": DEMO_SUITE },
    timeScale,
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const lab = await createDemoLab();
  for (const [name, value] of Object.entries(lab.env))
    console.log(`export ${name}='${value.replaceAll("'", "'\\''")}'`);
  const names: Record<string, string> = { "SM-S911B": "Galaxy S23, model SM-S911B" };
  for (const d of DEMO_DEVICES) {
    const name = names[d.model ?? ""] ?? d.model;
    console.error(`stand-in device ${d.serial} (${name}, Android ${d.release}) on usb:${d.usb}`);
  }
  console.error(`their state is in ${lab.stateDir}`);
}
