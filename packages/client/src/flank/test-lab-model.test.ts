import { describe, expect, it } from "vitest";
import { testLabPhysicalModels, testLabVirtualModels } from "./test-lab-catalog.ts";
import { selectionOfTestLabModel } from "./test-lab-model.ts";

describe("Test Lab model IDs in a flank file", () => {
  it("a virtual device ID is any emulator of the entry's API level, with no model", () => {
    expect(selectionOfTestLabModel("MediumPhone.arm", 33)).toEqual({
      emulator: true,
      instead: "is a Test Lab virtual device: any emulator of API 33",
    });
    expect(selectionOfTestLabModel("NexusLowRes", undefined)).toEqual({
      emulator: true,
      instead: "is a Test Lab virtual device: any emulator",
    });
  });

  it("Pixel2 is Test Lab's Pixel 2 emulator, walleye its physical Pixel 2", () => {
    expect(selectionOfTestLabModel("Pixel2", 28).emulator).toBe(true);
    expect(selectionOfTestLabModel("Pixel2.arm", 30).emulator).toBe(true);
    expect(selectionOfTestLabModel("walleye", 27)).toEqual({
      model: "Pixel 2",
      instead: 'is Test Lab\'s Pixel 2: a device whose model is "Pixel 2"',
    });
  });

  it("a Pixel's codename is the model adb reports for it", () => {
    expect(selectionOfTestLabModel("oriole", 31).model).toBe("Pixel 6");
    expect(selectionOfTestLabModel("bramble", 30).model).toBe("Pixel 4a (5G)");
    expect(selectionOfTestLabModel("tangorpro", 33).model).toBe("Pixel Tablet");
    expect(selectionOfTestLabModel("shamu", 22).model).toBe("Nexus 6");
  });

  it("a model adb reports for a Pixel is taken as it is, without a warning", () => {
    expect(selectionOfTestLabModel("Pixel 7", 33)).toEqual({ model: "Pixel 7" });
  });

  it("any other ID is kept as written, with a warning that a device host must report it", () => {
    expect(selectionOfTestLabModel("dreamlte", 28)).toEqual({
      model: "dreamlte",
      instead:
        "is kept as written: it must equal the model a device host reports for the phone (testbay agents lists them)",
    });
    // Test Lab's IDs are case-sensitive, and a name of Object.prototype is no codename.
    expect(selectionOfTestLabModel("REDFIN", 30).model).toBe("REDFIN");
    expect(selectionOfTestLabModel("constructor", 30).model).toBe("constructor");
  });

  it("no ID is both virtual and physical", () => {
    for (const id of testLabVirtualModels) expect(Object.hasOwn(testLabPhysicalModels, id)).toBe(false);
  });
});
