import { describe, expect, it } from "vitest";
import { attachmentKey, parseAttachmentsManifest } from "./read-xcresult.ts";

// The manifest `xcresulttool export attachments` writes: no recorded one was found (see
// test/fixtures/apple/SOURCES.md); its keys are those the public programs that read it use.
const manifest = [
  {
    testIdentifier: "LoginTests/testRejects()",
    testIdentifierURL: "test://com.apple.xcode/Shop/ShopUITests/LoginTests/testRejects",
    attachments: [
      {
        exportedFileName: "3F1C9C3E-0C55-4A8B-9E41-2A6C5B9D1E11.png",
        suggestedHumanReadableName: "Screenshot at failure_0_3F1C9C3E-0C55-4A8B-9E41-2A6C5B9D1E11.png",
        isAssociatedWithFailure: true,
        timestamp: 1736598000.5,
        configurationName: "Test Scheme Action",
        deviceName: "iPhone 15",
        deviceId: "UDID-1",
      },
    ],
  },
  { testIdentifier: "broken" },
  { testIdentifier: "CartTests/testAdds()", attachments: [{ exportedFileName: "../../etc/passwd" }] },
];

describe("parseAttachmentsManifest", () => {
  it("files each exported attachment under its test, inside the export folder", () => {
    const byTest = parseAttachmentsManifest(JSON.stringify(manifest), "/w/attachments");
    expect(byTest.get(attachmentKey("LoginTests", "testRejects"))).toEqual([
      {
        file: "/w/attachments/3F1C9C3E-0C55-4A8B-9E41-2A6C5B9D1E11.png",
        suggestedName: "Screenshot at failure_0_3F1C9C3E-0C55-4A8B-9E41-2A6C5B9D1E11.png",
        associatedWithFailure: true,
      },
    ]);
    expect(byTest.get(attachmentKey("CartTests", "testAdds()"))).toEqual([
      { file: "/w/attachments/passwd", suggestedName: null, associatedWithFailure: false },
    ]);
    expect(byTest.size).toBe(2);
  });

  it("is empty for what is not a manifest", () => {
    expect(parseAttachmentsManifest("nope", "/w").size).toBe(0);
    expect(parseAttachmentsManifest("{}", "/w").size).toBe(0);
  });
});
