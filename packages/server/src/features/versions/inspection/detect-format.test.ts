import { describe, expect, it } from "vitest";
import { detectFormat } from "./detect-format.ts";

async function* entries(...names: string[]) {
  for (const name of names) yield { name };
}

describe("detectFormat", () => {
  it("collects an APK's ABIs from lib/<abi>/*.so only", async () => {
    const found = await detectFormat(
      entries(
        "AndroidManifest.xml",
        "META-INF/MANIFEST.MF",
        "lib/x86/libb.so",
        "lib/arm64-v8a/liba.so",
        "lib/arm64-v8a/libc.so",
        "lib/armeabi-v7a/wrap.sh",
        "assets/lib/mips/libz.so",
      ),
    );
    expect(found).toMatchObject({ format: "apk", abis: ["arm64-v8a", "x86"] });
  });

  it("collects an AAB's ABIs from every module", async () => {
    const found = await detectFormat(
      entries("base/manifest/AndroidManifest.xml", "base/lib/arm64-v8a/liba.so", "camera/lib/x86_64/libb.so"),
    );
    expect(found).toMatchObject({ format: "aab", abis: ["arm64-v8a", "x86_64"] });
  });

  it("takes the app's own Info.plist, not one of an embedded framework or extension", async () => {
    const found = await detectFormat(
      entries(
        "Payload/App.app/Frameworks/Kit.framework/Info.plist",
        "Payload/App.app/PlugIns/W.appex/Info.plist",
        "Payload/App.app/Info.plist",
      ),
    );
    expect(found).toMatchObject({ format: "ipa", infoPlist: { name: "Payload/App.app/Info.plist" } });
  });

  it("recognises a zipped .app, ignoring the __MACOSX folder Finder adds", async () => {
    const found = await detectFormat(entries("__MACOSX/App.app/._Info.plist", "App.app/Info.plist"));
    expect(found).toMatchObject({ format: "app", infoPlist: { name: "App.app/Info.plist" } });
  });
});
