/**
 * Firebase Test Lab's Android model IDs, as a flank file's `gcloud.device[].model` names them, and what a
 * Testbay device host reports for the same phone. Facts only; where they come from:
 *
 * - Virtual IDs: `gcloud firebase test android models list` output kept in public repositories and threads:
 *   SimonMarquis/Firebase-Test-Lab-Devices (README, a refreshed copy of the catalogue, 2023: MediumPhone.arm,
 *   MediumTablet.arm, SmallPhone.arm, Pixel2, Pixel2.arm, Pixel3, NexusLowRes, Nexus4/5/5X/6/6P/7/9/10,
 *   Nexus7_clone_16_9, AndroidTablet270dpi, GoogleTvEmulator, AmatiTvEmulator, all FORM VIRTUAL),
 *   bitrise-steplib/steps-virtual-device-testing-for-android (its `models list --filter=VIRTUAL` check, 2025:
 *   AndroidTablet270dpi.arm), and Flank/flank pull requests #888 and #1916 (2020–2021: NexusLowRes_Q,
 *   NexusTabletLowRes2, NexusTabletLowRes3, and NexusLowResEmulator of FORM EMULATOR).
 * - Physical IDs are the phones' codenames (ro.product.device). The model adb reports (ro.product.model) is the
 *   `PRODUCT_MODEL` of each phone's device tree (device/google/<family>/aosp_<codename>.mk and the LineageOS
 *   and CalyxOS trees built on them), and Test Lab's own MODEL_NAME column agrees where it lists the phone
 *   (walleye "Pixel 2", blueline "Pixel 3", redfin "Pixel 5", oriole "Pixel 6", bluejay "Pixel 6a",
 *   panther "Pixel 7", cheetah "Pixel 7 Pro", sailfish "Pixel", hammerhead "Nexus 5").
 *
 * Only Google's phones are mapped: their model is one name worldwide. Other makers' codenames (dreamlte, x1q,
 * HWANE-LX2) stand for one regional variant (SM-G950F, SM-G981U1, ANE-LX2), which a team's own phone may not be.
 */

/** Test Lab IDs of emulators (FORM VIRTUAL or EMULATOR in the catalogue). */
export const testLabVirtualModels: ReadonlySet<string> = new Set([
  "AmatiTvEmulator",
  "AndroidTablet270dpi",
  "AndroidTablet270dpi.arm",
  "GoogleTvEmulator",
  "MediumPhone.arm",
  "MediumTablet.arm",
  "Nexus10",
  "Nexus4",
  "Nexus5",
  "Nexus5X",
  "Nexus6",
  "Nexus6P",
  "Nexus7",
  "Nexus7_clone_16_9",
  "Nexus9",
  "NexusLowRes",
  "NexusLowResEmulator",
  "NexusLowRes_Q",
  "NexusTabletLowRes2",
  "NexusTabletLowRes3",
  "Pixel2",
  "Pixel2.arm",
  "Pixel3",
  "SmallPhone.arm",
]);

/** Test Lab IDs of Google's physical phones (their codenames) → the model adb reports for them. */
export const testLabPhysicalModels: Readonly<Record<string, string>> = {
  hammerhead: "Nexus 5",
  shamu: "Nexus 6",
  bullhead: "Nexus 5X",
  angler: "Nexus 6P",
  sailfish: "Pixel",
  marlin: "Pixel XL",
  walleye: "Pixel 2",
  taimen: "Pixel 2 XL",
  blueline: "Pixel 3",
  crosshatch: "Pixel 3 XL",
  sargo: "Pixel 3a",
  bonito: "Pixel 3a XL",
  flame: "Pixel 4",
  coral: "Pixel 4 XL",
  sunfish: "Pixel 4a",
  bramble: "Pixel 4a (5G)",
  redfin: "Pixel 5",
  barbet: "Pixel 5a",
  oriole: "Pixel 6",
  raven: "Pixel 6 Pro",
  bluejay: "Pixel 6a",
  panther: "Pixel 7",
  cheetah: "Pixel 7 Pro",
  lynx: "Pixel 7a",
  felix: "Pixel Fold",
  tangorpro: "Pixel Tablet",
  shiba: "Pixel 8",
  husky: "Pixel 8 Pro",
  akita: "Pixel 8a",
  tokay: "Pixel 9",
  caiman: "Pixel 9 Pro",
  komodo: "Pixel 9 Pro XL",
  comet: "Pixel 9 Pro Fold",
  tegu: "Pixel 9a",
  frankel: "Pixel 10",
  blazer: "Pixel 10 Pro",
  mustang: "Pixel 10 Pro XL",
  rango: "Pixel 10 Pro Fold",
  stallion: "Pixel 10a",
};
