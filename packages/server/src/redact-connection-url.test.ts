import { describe, expect, it } from "vitest";
import { redactConnectionUrl } from "./redact-connection-url.ts";

describe("redactConnectionUrl", () => {
  it.each([
    ["mysql://root:pw@localhost/db", "mysql://root:***@localhost/db"],
    ["postgres://app:s3cr3t@db.internal:5432/testbay", "postgres://app:***@db.internal:5432/testbay"],
    ["redis://:hunter2@cache:6379/0", "redis://:***@cache:6379/0"],
    ["rediss://token-as-user@cache.example.com:6380", "rediss://***@cache.example.com:6380"],
    // Unencoded special characters in the password: hidden whole, not cut at the first one.
    ["redis://default:p/a#s?s@w@cache:6379", "redis://default:***@cache:6379"],
    ["postgres://u:pa ss@h/db", "postgres://u:***@h/db"],
    // An s3:// URL's user name is an access key ID.
    ["s3://AKIAEXAMPLE:wJalrXUtnFEMI@blobs?region=us-east-1", "s3://***@blobs?region=us-east-1"],
    [
      "s3://bucket?endpoint=http://u:p@host:9000&region=x",
      "s3://bucket?endpoint=http://u:***@host:9000&region=x",
    ],
    [
      "s3://bucket?region=us-east-1&secret_access_key=wJalr/XUtn+FEMI",
      "s3://bucket?region=us-east-1&secret_access_key=***",
    ],
    ["postgres://h/db?password=pw&sslmode=require", "postgres://h/db?password=***&sslmode=require"],
    ["host=db port=5432 password=pw user=app", "host=db port=5432 password=*** user=app"],
  ])("hides the secret in %s", (url, redacted) => {
    expect(redactConnectionUrl(url)).toBe(redacted);
  });

  it.each([
    "redis://cache:6379/0",
    "postgres://db.internal:5432/testbay?sslmode=require",
    "https://testbay.example.com/v1",
    "sqlite:/var/lib/testbay/testbay.db",
    "abc",
    "",
  ])("leaves %j alone: it holds no secret", (url) => {
    expect(redactConnectionUrl(url)).toBe(url);
  });

  it("redacts URLs inside a sentence, leaving the words", () => {
    expect(
      redactConnectionUrl(
        'TESTBAY_X must be redis://host:port; got "redis://:pw@h:1" (see postgres://u:q@h)',
      ),
    ).toBe('TESTBAY_X must be redis://host:port; got "redis://:***@h:1" (see postgres://u:***@h)');
  });
});
