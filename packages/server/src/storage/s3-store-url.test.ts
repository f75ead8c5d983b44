import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../config.ts";
import { openBlobStore } from "./index.ts";
import { S3BlobStore } from "./s3-store.ts";
import { hasUserInfo, parseS3Url, S3UrlError } from "./s3-url.ts";

function errorOf(url: string): string {
  try {
    parseS3Url(url);
  } catch (error) {
    if (error instanceof S3UrlError) return error.message;
    throw error;
  }
  throw new Error(`parseS3Url accepted ${url}`);
}

describe("parseS3Url", () => {
  it("reads the bucket alone, with AWS defaults", () => {
    expect(parseS3Url("s3://testbay-blobs")).toEqual({
      bucket: "testbay-blobs",
      endpoint: undefined,
      region: undefined,
      forcePathStyle: false,
    });
    expect(parseS3Url("s3://my.bucket/")).toMatchObject({ bucket: "my.bucket" });
  });

  it("reads endpoint, region and force_path_style, the endpoint written plainly or URL-encoded", () => {
    const expected = {
      bucket: "blobs",
      endpoint: "http://127.0.0.1:4569",
      region: "us-east-1",
      forcePathStyle: true,
    };
    expect(
      parseS3Url("s3://blobs?endpoint=http://127.0.0.1:4569&region=us-east-1&force_path_style=true"),
    ).toEqual(expected);
    expect(
      parseS3Url("s3://blobs?endpoint=http%3A%2F%2F127.0.0.1%3A4569&region=us-east-1&force_path_style=1"),
    ).toEqual(expected);
    expect(parseS3Url("s3://blobs?endpoint=https://minio.internal/s3")).toMatchObject({
      endpoint: "https://minio.internal/s3",
    });
    expect(parseS3Url("s3://blobs?force_path_style=false")).toMatchObject({ forcePathStyle: false });
  });

  it("refuses credentials in the URL, and says where they go instead", () => {
    for (const url of [
      "s3://AKIAEXAMPLE:secret@bucket",
      "s3://AKIAEXAMPLE@bucket?region=eu-west-1",
      "s3://bucket?endpoint=http://minio:miniosecret@127.0.0.1:9000",
    ]) {
      const message = errorOf(url);
      expect(message).toMatch(/must not contain credentials.*AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY/);
      expect(message).not.toContain("secret");
      expect(message).not.toContain("\n");
    }
  });

  it.each([
    ["gs://bucket", /must start with s3:\/\//],
    ["s3://", /must name a bucket/],
    ["s3:///path", /must name a bucket/],
    ["s3://Bucket_Name", /valid bucket.*"Bucket_Name"/],
    ["s3://ab", /valid bucket/],
    ["s3://bucket:9000", /not a host: give the server as \?endpoint=http:\/\/host:9000/],
    ["s3://bucket/prefix/dir", /a bucket only.*"\/prefix\/dir"/],
    ["s3://bucket#frag", /#fragment/],
    ["s3://bucket?forcePathStyle=true", /unknown parameter "forcePathStyle"; known: endpoint, region/],
    ["s3://bucket?region=us-east-1&region=eu-west-1", /region twice/],
    ["s3://bucket?endpoint=127.0.0.1:9000", /endpoint="127\.0\.0\.1:9000"; it must be an http\(s\) URL/],
    ["s3://bucket?endpoint=ftp://host", /must be an http\(s\) URL/],
    ["s3://bucket?endpoint=not a url", /must be an http\(s\) URL/],
    ["s3://bucket?region=US East", /region="US East"; a region looks like us-east-1/],
    ["s3://bucket?force_path_style=maybe", /force_path_style="maybe"; it must be true or false/],
  ])("refuses %s with a clear message", (url, message) => {
    expect(errorOf(url)).toMatch(message);
  });
});

describe("hasUserInfo", () => {
  it("sees a user name or password in the URL itself", () => {
    expect(hasUserInfo("s3://k:s@bucket")).toBe(true);
    expect(hasUserInfo("s3://bucket?endpoint=http://host")).toBe(false);
  });
});

describe("TESTBAY_STORAGE_URL in loadConfig", () => {
  function problemsOf(url: string): string[] {
    try {
      loadConfig({ TESTBAY_STORAGE_URL: url });
    } catch (error) {
      if (error instanceof ConfigError) return error.problems;
      throw error;
    }
    throw new Error(`loadConfig accepted ${url}`);
  }

  it("accepts s3:// URLs as they are", () => {
    const url = "s3://blobs?endpoint=http://127.0.0.1:4569&region=us-east-1&force_path_style=true";
    expect(loadConfig({ TESTBAY_STORAGE_URL: url }).storageUrl).toBe(url);
  });

  it("refuses credentials in one line that does not show them", () => {
    const problems = problemsOf("s3://AKIAEXAMPLE:wJalrXUtnFEMI@blobs?region=us-east-1");
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(
      /^TESTBAY_STORAGE_URL must not contain credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY .*; got "s3:\/\/\*\*\*@blobs\?region=us-east-1"$/,
    );
    expect(problems[0]).not.toContain("wJalrXUtnFEMI");
    expect(problems[0]).not.toContain("AKIAEXAMPLE");
  });

  it("names what is wrong in an s3:// URL", () => {
    expect(problemsOf("s3://blobs?endpoint=minio:9000")).toEqual([
      'TESTBAY_STORAGE_URL has endpoint="minio:9000"; it must be an http(s) URL like http://127.0.0.1:9000; got "s3://blobs?endpoint=minio:9000"',
    ]);
    expect(problemsOf("s3://blobs?path_style=true")[0]).toMatch(/unknown parameter "path_style"/);
  });

  it("still refuses other schemes with the general rule", () => {
    expect(problemsOf("gs://bucket")[0]).toMatch(/must be file:<directory> or s3:\/\/bucket/);
  });
});

describe("openBlobStore", () => {
  it("opens an S3BlobStore for s3:// without touching the network", async () => {
    const store = await openBlobStore(
      "s3://blobs?endpoint=http://127.0.0.1:1&region=us-east-1&force_path_style=true",
    );
    expect(store).toBeInstanceOf(S3BlobStore);
    await (store as S3BlobStore).close();
  });

  it("refuses a bad s3:// URL with the variable's name and without its credentials", async () => {
    await expect(openBlobStore("s3://key:secret@blobs")).rejects.toThrow(
      "TESTBAY_STORAGE_URL must not contain credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or use an instance role) instead; got s3://***@blobs",
    );
  });

  it("refuses other schemes", async () => {
    await expect(openBlobStore("gs://bucket")).rejects.toThrow(/must be file:<directory> or s3:\/\/bucket/);
  });
});
