/**
 * `TESTBAY_STORAGE_URL=s3://bucket?endpoint=…&region=…&force_path_style=true`, parsed and checked without
 * the AWS SDK, so config validation can use it before anything is opened.
 */

/** Where an S3-compatible store lives. Credentials are never part of it: the AWS SDK's default chain finds them. */
export interface S3Location {
  bucket: string;
  /** e.g. `http://127.0.0.1:9000` for MinIO; undefined means AWS S3 itself. */
  endpoint: string | undefined;
  /** undefined means the SDK's default (AWS_REGION, the AWS profile). */
  region: string | undefined;
  /** Bucket in the path (`http://host/bucket/key`) rather than in the host name; most S3 look-alikes need it. */
  forcePathStyle: boolean;
}

/**
 * A storage URL that cannot be used. The message is a predicate that reads after the variable's name
 * ("TESTBAY_STORAGE_URL must …"), on one line.
 */
export class S3UrlError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "S3UrlError";
  }
}

const example = "s3://bucket?endpoint=http://host:9000&region=us-east-1&force_path_style=true";
const parameters = ["endpoint", "region", "force_path_style"];
// S3's rules for bucket names (3–63 characters; lower-case letters, digits, dots and hyphens).
const bucketPattern = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;
const regionPattern = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const booleans: Record<string, boolean> = {
  true: true,
  "1": true,
  yes: true,
  false: false,
  "0": false,
  no: false,
};

/** Whether a storage URL carries a user name or password (which must then not be shown anywhere). */
export function hasUserInfo(url: string): boolean {
  return /^[a-z][a-z0-9+.-]*:\/\/[^/?#]*@/i.test(url);
}

/** Parses an `s3://` storage URL; throws an S3UrlError saying what is wrong and how to write it. */
export function parseS3Url(url: string): S3Location {
  if (!/^s3:\/\//i.test(url)) throw new S3UrlError(`must start with s3:// (${example})`);
  if (hasUserInfo(url)) {
    throw new S3UrlError(
      "must not contain credentials: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or AWS_PROFILE, or use an instance role) instead",
    );
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new S3UrlError(`must be a URL like ${example}`);
  }
  const bucket = parsed.hostname;
  if (bucket === "") throw new S3UrlError(`must name a bucket: ${example}`);
  if (!bucketPattern.test(bucket) || bucket.includes("..")) {
    throw new S3UrlError(
      `must name a valid bucket (3–63 lower-case letters, digits, dots and hyphens), not ${JSON.stringify(bucket)}`,
    );
  }
  if (parsed.port !== "") {
    throw new S3UrlError(
      `names a bucket, not a host: give the server as ?endpoint=http://host:${parsed.port}`,
    );
  }
  if (parsed.pathname !== "" && parsed.pathname !== "/") {
    throw new S3UrlError(
      `must name a bucket only (s3://bucket), not a path in it: ${JSON.stringify(parsed.pathname)}`,
    );
  }
  if (parsed.hash !== "") throw new S3UrlError("must not have a #fragment");

  const seen = new Set<string>();
  for (const name of parsed.searchParams.keys()) {
    if (!parameters.includes(name)) {
      throw new S3UrlError(
        `has an unknown parameter ${JSON.stringify(name)}; known: ${parameters.join(", ")}`,
      );
    }
    if (seen.has(name)) throw new S3UrlError(`has the parameter ${name} twice`);
    seen.add(name);
  }

  const endpoint = parsed.searchParams.get("endpoint") ?? undefined;
  if (endpoint !== undefined) checkEndpoint(endpoint);

  const region = parsed.searchParams.get("region") ?? undefined;
  if (region !== undefined && !regionPattern.test(region)) {
    throw new S3UrlError(`has region=${JSON.stringify(region)}; a region looks like us-east-1`);
  }

  const pathStyle = parsed.searchParams.get("force_path_style") ?? undefined;
  const forcePathStyle = pathStyle === undefined ? false : booleans[pathStyle.toLowerCase()];
  if (forcePathStyle === undefined) {
    throw new S3UrlError(`has force_path_style=${JSON.stringify(pathStyle)}; it must be true or false`);
  }
  return { bucket, endpoint, region, forcePathStyle };
}

function checkEndpoint(endpoint: string): void {
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    throw new S3UrlError(
      `has endpoint=${JSON.stringify(endpoint)}; it must be an http(s) URL like http://127.0.0.1:9000`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new S3UrlError(
      `has endpoint=${JSON.stringify(endpoint)}; it must be an http(s) URL like http://127.0.0.1:9000`,
    );
  }
  if (url.username !== "" || url.password !== "") {
    throw new S3UrlError(
      "must not contain credentials, not even in the endpoint: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY instead",
    );
  }
  if (url.search !== "" || url.hash !== "") {
    throw new S3UrlError(
      "has an endpoint with its own ?query or #fragment; URL-encode it, or give only scheme, host, port and path",
    );
  }
}
