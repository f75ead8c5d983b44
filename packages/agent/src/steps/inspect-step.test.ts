import { afterEach, describe, expect, it } from "vitest";
import { runInspectStep } from "./inspect-step.ts";
import type { BinaryMetadata } from "./step-types.ts";
import { ANDROID_BINARY, makeStepContext, type TestStepContext } from "./test-context.ts";

let ctx: TestStepContext;
afterEach(() => ctx.cleanup());

const IOS_BINARY: BinaryMetadata = {
  ...ANDROID_BINARY,
  format: "ipa",
  platform: "ios",
  min_sdk: null,
  target_sdk: null,
  min_os_version: "15.0",
  abis: [],
  permissions: [],
};

describe("runInspectStep", () => {
  it("passes with one passed test case per expectation", async () => {
    ctx = await makeStepContext();
    const outcome = await runInspectStep(
      {
        type: "inspect",
        expect: {
          max_size_mb: 50,
          min_sdk_at_most: 24,
          target_sdk_at_least: 33,
          abis_include: ["arm64-v8a"],
          permissions_exclude: ["android.permission.READ_SMS"],
          debuggable: false,
        },
      },
      ctx,
    );
    expect(outcome).toEqual({ status: "passed", message: null });
    expect(ctx.cases.map((c) => [c.classname, c.name, c.status, c.message])).toEqual([
      ["inspect", "max_size_mb ≤ 50", "passed", null],
      ["inspect", "min_sdk ≤ 24", "passed", null],
      ["inspect", "target_sdk ≥ 33", "passed", null],
      ["inspect", "abis include arm64-v8a", "passed", null],
      ["inspect", "permissions exclude android.permission.READ_SMS", "passed", null],
      ["inspect", "debuggable is false", "passed", null],
    ]);
  });

  it("fails each broken expectation with the actual value in the message", async () => {
    ctx = await makeStepContext({
      binarySizeBytes: 61_234_567,
      binary: {
        ...ANDROID_BINARY,
        min_sdk: 26,
        target_sdk: 31,
        abis: ["x86_64"],
        permissions: ["android.permission.INTERNET", "android.permission.READ_SMS"],
        debuggable: true,
      },
    });
    const outcome = await runInspectStep(
      {
        type: "inspect",
        expect: {
          max_size_mb: 50,
          min_sdk_at_most: 24,
          target_sdk_at_least: 33,
          abis_include: ["arm64-v8a"],
          permissions_exclude: ["android.permission.READ_SMS", "android.permission.SEND_SMS"],
          debuggable: false,
        },
      },
      ctx,
    );
    const messages = [
      "size is 61.2 MB (61,234,567 bytes), over the limit of 50 MB",
      "minSdk is 26, expected at most 24",
      "targetSdk is 31, expected at least 33",
      "abis [x86_64] lack arm64-v8a",
      "requests android.permission.READ_SMS",
      "debuggable is true, expected false",
    ];
    expect(ctx.cases.map((c) => [c.status, c.message])).toEqual(messages.map((m) => ["failed", m]));
    expect(outcome).toEqual({ status: "failed", message: messages.join("; ") });
  });

  it("counts a megabyte as 1,000,000 bytes", async () => {
    ctx = await makeStepContext({ binarySizeBytes: 50_000_000 });
    expect(await runInspectStep({ type: "inspect", expect: { max_size_mb: 50 } }, ctx)).toMatchObject({
      status: "passed",
    });
    ctx.cases.length = 0;
    ctx.binarySizeBytes = 50_000_001;
    expect(await runInspectStep({ type: "inspect", expect: { max_size_mb: 50 } }, ctx)).toMatchObject({
      status: "failed",
    });
  });

  it("fails Android-only expectations on an iOS binary, saying it has no such value", async () => {
    ctx = await makeStepContext({ binary: IOS_BINARY });
    const outcome = await runInspectStep(
      {
        type: "inspect",
        expect: { min_sdk_at_most: 24, target_sdk_at_least: 33, abis_include: ["arm64"], debuggable: false },
      },
      ctx,
    );
    expect(outcome.status).toBe("failed");
    expect(ctx.cases.map((c) => [c.status, c.message])).toEqual([
      ["failed", "the binary has no minSdk (ios ipa)"],
      ["failed", "the binary has no targetSdk (ios ipa)"],
      ["failed", "the binary has no Android ABI list (ios ipa)"],
      ["passed", null],
    ]);
  });
});
