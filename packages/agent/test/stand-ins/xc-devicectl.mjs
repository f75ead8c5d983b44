// `xcrun devicectl …` (Xcode 15+): the lab's physical devices. `list devices --json-output FILE` writes the
// document of ../fixtures/apple/devicectl-list-devices.json (same keys, jsonVersion 2); `device install app`
// installs an .app as simctl does on a simulator and fails as devicectl does (the CoreDeviceError 3002/3000
// document of ../fixtures/apple/devicectl-install-app-invalid-bundle.json). Other subcommands are refused.
import { writeFileSync } from "node:fs";
import { allPhysicalDevices, findPhysicalDevice, installedApps, setInstalledApps } from "./apple-state.mjs";
import { appleJson, readAppBundle, unsupported, uuidFrom } from "./xc-common.mjs";

const VERSION = "355.7.7";

function info(argv, commandType, outcome) {
  return {
    arguments: ["devicectl", ...argv],
    commandType,
    environment: { TERM: process.env.TERM ?? "xterm-256color" },
    jsonVersion: 2,
    outcome,
    version: VERSION,
  };
}

function listed(d) {
  const connected = d.connected !== false;
  return {
    capabilities: connected
      ? [
          { featureIdentifier: "com.apple.coredevice.feature.connectdevice", name: "Connect to Device" },
          { featureIdentifier: "com.apple.coredevice.feature.installapp", name: "Install Application" },
          { featureIdentifier: "com.apple.coredevice.feature.uninstallapp", name: "Uninstall Application" },
        ]
      : [],
    connectionProperties: {
      authenticationType: "manualPairing",
      isMobileDeviceOnly: false,
      lastConnectionDate: "2026-01-29T08:49:25.179Z",
      pairingState: "paired",
      potentialHostnames: [`${d.udid}.coredevice.local`, `${d.identifier}.coredevice.local`],
      transportType: "wired",
      tunnelState: connected ? "connected" : "unavailable",
      tunnelTransportProtocol: "tcp",
    },
    deviceProperties: {
      bootedFromSnapshot: true,
      bootedSnapshotName: "com.apple.os.update-0000",
      ddiServicesAvailable: connected,
      developerModeStatus: "enabled",
      hasInternalOSBuild: false,
      name: d.name,
      osBuildUpdate: d.osBuild ?? "22A3354",
      osVersionNumber: d.osVersion ?? "18.0",
      rootFileSystemIsWritable: false,
    },
    hardwareProperties: {
      cpuType: { name: "arm64e", subType: 2, type: 16777228 },
      deviceType: d.deviceType ?? "iPhone",
      ecid: 0,
      hardwareModel: d.hardwareModel ?? "D83AP",
      internalStorageCapacity: 128000000000,
      isProductionFused: true,
      marketingName: d.marketingName ?? d.model ?? "iPhone 15 Pro",
      platform: "iOS",
      productType: d.productType ?? "iPhone16,1",
      reality: "physical",
      serialNumber: d.serialNumber ?? "F2LXXXXXXXXX",
      supportedCPUTypes: [
        { name: "arm64e", subType: 2, type: 16777228 },
        { name: "arm64", subType: 0, type: 16777228 },
      ],
      supportedDeviceFamilies: [1, 2],
      thinningProductType: d.productType ?? "iPhone16,1",
      udid: d.udid,
    },
    identifier: d.identifier,
    visibilityClass: "default",
  };
}

function option(args, name) {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
}

function writeJsonOutput(target, doc) {
  if (target === undefined) return;
  const text = appleJson(doc);
  if (target === "-") process.stdout.write(text);
  else writeFileSync(target, text);
}

function failure(argv, commandType, jsonOutput, error, lines) {
  writeJsonOutput(jsonOutput, { error, info: info(argv, commandType, "failed") });
  process.stderr.write(`ERROR: ${lines.join("\n       ")}\n`);
  return 1;
}

function notFound(argv, commandType, jsonOutput, id) {
  return failure(
    argv,
    commandType,
    jsonOutput,
    {
      code: 1000,
      domain: "com.apple.dt.CoreDeviceError",
      userInfo: { NSLocalizedDescription: { string: `The specified device was not found. (${id})` } },
    },
    [
      `The specified device was not found. (com.apple.dt.CoreDeviceError error 1000 (0x3E8))`,
      `DeviceIdentifier = ${id}`,
    ],
  );
}

function installApp(argv, args, jsonOutput) {
  const commandType = "devicectl.device.install.app";
  const id = option(args, "--device") ?? option(args, "-d");
  const path = args
    .filter(
      (a, i) =>
        !a.startsWith("-") && !["--device", "-d", "--json-output", "-j", "--timeout"].includes(args[i - 1]),
    )
    .at(-1);
  const device = id === undefined ? undefined : findPhysicalDevice(id);
  if (!device || device.connected === false) return notFound(argv, commandType, jsonOutput, id ?? "");
  const app = readAppBundle(path);
  if (app.error) {
    const name = (path ?? "").replace(/\/$/, "").split("/").at(-1);
    const url = { url: `file://${path}/` };
    return failure(
      argv,
      commandType,
      jsonOutput,
      {
        code: 3002,
        domain: "com.apple.dt.CoreDeviceError",
        userInfo: {
          NSLocalizedDescription: { string: "Failed to install the app on the device." },
          NSUnderlyingError: {
            error: {
              code: 3000,
              domain: "com.apple.dt.CoreDeviceError",
              userInfo: {
                NSLocalizedDescription: { string: `The item at ${name} is not a valid bundle.` },
                NSLocalizedFailureReason: {
                  string: "Failed to get the identifier for the app to be installed.",
                },
                NSLocalizedRecoverySuggestion: {
                  string:
                    "Ensure that your bundle's Info.plist contains a value for the CFBundleIdentifier key.",
                },
                NSURL: url,
              },
            },
          },
          NSURL: url,
        },
      },
      [
        "Failed to install the app on the device. (com.apple.dt.CoreDeviceError error 3002 (0xBBA))",
        `The item at ${name} is not a valid bundle.`,
      ],
    );
  }
  const apps = installedApps(device.identifier);
  const before = apps[app.bundleId];
  const container = uuidFrom(`${device.identifier}/${app.bundleId}`);
  apps[app.bundleId] = {
    bundleId: app.bundleId,
    name: app.name,
    version: app.version,
    build: app.build,
    path: app.path,
    installs: (before?.installs ?? 0) + 1,
    installedBy: "devicectl",
    installedAt: Date.now(),
  };
  setInstalledApps(device.identifier, apps);
  const installationURL = `file:///private/var/containers/Bundle/Application/${container}/${app.name}.app/`;
  writeJsonOutput(jsonOutput, {
    info: info(argv, commandType, "success"),
    result: {
      deviceIdentifier: device.identifier,
      installedApplications: [{ bundleID: app.bundleId, installationURL }],
    },
  });
  if (!args.includes("--quiet") && !args.includes("-q")) {
    process.stdout.write(
      `App installed:\n• bundleID: ${app.bundleId}\n• installationURL: ${installationURL}\n`,
    );
  }
  return 0;
}

function uninstallApp(argv, args, jsonOutput) {
  const commandType = "devicectl.device.uninstall.app";
  const id = option(args, "--device") ?? option(args, "-d");
  const device = id === undefined ? undefined : findPhysicalDevice(id);
  if (!device || device.connected === false) return notFound(argv, commandType, jsonOutput, id ?? "");
  const bundleId = args
    .filter(
      (a, i) =>
        !a.startsWith("-") && !["--device", "-d", "--json-output", "-j", "--timeout"].includes(args[i - 1]),
    )
    .at(-1);
  const apps = installedApps(device.identifier);
  delete apps[bundleId];
  setInstalledApps(device.identifier, apps);
  writeJsonOutput(jsonOutput, {
    info: info(argv, commandType, "success"),
    result: { deviceIdentifier: device.identifier, uninstalledApplications: [{ bundleID: bundleId }] },
  });
  if (!args.includes("--quiet")) process.stdout.write(`App uninstalled.\n`);
  return 0;
}

export function devicectl(argv) {
  const jsonOutput = option(argv, "--json-output") ?? option(argv, "-j");
  const words = argv.filter((a) => !a.startsWith("-"));
  if (words[0] === "list" && words[1] === "devices") {
    const devices = allPhysicalDevices();
    writeJsonOutput(jsonOutput, {
      info: info(argv, "devicectl.list.devices", "success"),
      result: { devices: devices.map(listed) },
    });
    if (!argv.includes("--quiet") && jsonOutput !== "-") {
      let text = "Devices:\nName   Hostname   Identifier   State   Model\n";
      for (const d of devices) {
        text += `${d.name}   ${d.udid}.coredevice.local   ${d.identifier}   ${d.connected === false ? "unavailable" : "connected"}   ${d.model ?? "iPhone 15 Pro"}\n`;
      }
      process.stdout.write(text);
    }
    return 0;
  }
  if (words[0] === "device" && words[1] === "install" && words[2] === "app") {
    return installApp(argv, argv.slice(argv.indexOf("app") + 1), jsonOutput);
  }
  if (words[0] === "device" && words[1] === "uninstall" && words[2] === "app") {
    return uninstallApp(argv, argv.slice(argv.indexOf("app") + 1), jsonOutput);
  }
  return unsupported("xcrun", `devicectl ${argv.join(" ")}`);
}
