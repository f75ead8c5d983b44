// Sets up a stand-in Android device for trying the Android walkthrough of the README on a machine without
// one: `eval "$(npx tsx packages/agent/test/stand-ins/demo-lab.ts)"` in the shell that starts the agent puts
// the stand-in adb first on PATH with one "Pixel 7" whose test package com.example.basic.test holds four tests
// (one failing). It stands in for a device; nothing here talks to a real one.
import { createDeviceLab } from "./device-lab.ts";

const stack = `java.lang.AssertionError: expected:<Welcome> but was:<Sign in>
\tat org.junit.Assert.fail(Assert.java:89)
\tat com.example.basic.LoginTest.rejectsBadPassword(LoginTest.kt:42)`;

const lab = await createDeviceLab({
  devices: [{ serial: "emulator-5554", model: "Pixel 7", release: "14", sdk: 34 }],
  suites: {
    "com.example.basic.test": {
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
          stack,
          logcat: ["W/Login: bad password"],
        },
        { class: "com.example.basic.CartTest", method: "addsItem", outcome: "pass", duration_ms: 1200 },
        { class: "com.example.basic.CartTest", method: "remembersCart", outcome: "ignored" },
      ],
    },
  },
});
for (const [name, value] of Object.entries(lab.env))
  console.log(`export ${name}='${value.replaceAll("'", "'\\''")}'`);
console.error(`stand-in device emulator-5554 (Pixel 7, Android 14); its state is in ${lab.stateDir}`);
