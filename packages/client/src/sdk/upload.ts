import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { stat } from "node:fs/promises";
import { type Problem, TestbayApiError } from "./errors.ts";
import type { AppVersion, TestPackage } from "./models.ts";
import { segment, type Transport } from "./transport.ts";

export interface UploadProgress {
  /** Bytes sent in the current attempt (a retry starts again from 0). */
  sentBytes: number;
  totalBytes: number;
  attempt: number;
}

export interface UploadOptions {
  packageName: string;
  version: string;
  /** Path of the binary on disk: APK, AAB, IPA or zipped .app. */
  file: string;
  onProgress?: (progress: UploadProgress) => void;
  /**
   * The server's upload limit in bytes (`GET /me`), asked only when a transfer is about to start; a file
   * over it is refused before any byte is sent. Undefined: the server's 413 says so instead.
   */
  maxUploadBytes?: () => Promise<number | undefined>;
  /** HEAD the version first and skip the transfer when it is registered (default true). */
  skipIfRegistered?: boolean;
  deadlineAt?: number;
  signal?: AbortSignal;
}

/**
 * `uploaded`: this call registered the version. `skipped`: it was registered already, nothing was sent.
 * `already_landed`: the server said 409 but holds exactly this file (sha256 equal): an earlier attempt of this
 * upload, retried after a 502 or a dropped connection, had landed (rule 9).
 */
export type UploadOutcome = "uploaded" | "skipped" | "already_landed";

export interface UploadResult {
  outcome: UploadOutcome;
  /** The registered version; undefined when skipped on the HEAD's ETag alone (a HEAD has no body). */
  version: AppVersion | undefined;
  sizeBytes: number;
}

/** Hex SHA-256 of a file, read as a stream. */
export async function sha256File(file: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest("hex");
}

async function* readWithProgress(file: string, report: (sent: number) => void): AsyncIterable<Uint8Array> {
  let sent = 0;
  report(0);
  for await (const chunk of createReadStream(file, { highWaterMark: 256 * 1024 })) {
    yield chunk as Buffer;
    sent += (chunk as Buffer).length;
    report(sent);
  }
}

/** The version (or its test package) turned out to be stored between two attempts of an upload. */
export class RegisteredMeanwhile extends Error {
  override name = "RegisteredMeanwhile";
}

export interface StreamedPut {
  path: string;
  file: string;
  size: number;
  onProgress: ((progress: UploadProgress) => void) | undefined;
  deadlineAt: number | undefined;
  signal: AbortSignal | undefined;
  /** Whether what this PUT creates exists on the server now (asked before each resend). */
  landed: () => Promise<boolean>;
}

/**
 * A PUT whose body is a file, streamed from disk and read anew for each attempt. Retried after
 * 502/503/504/429 or a dropped connection (PUT is idempotent: the resource is created once); throws
 * RegisteredMeanwhile when, before a resend, the resource turns out to exist already.
 */
export async function putFile<T>(transport: Transport, put: StreamedPut): Promise<T> {
  let attempt = -1;
  const response = await transport.json<T>({
    method: "PUT",
    path: put.path,
    deadlineAt: put.deadlineAt,
    signal: put.signal,
    // Before sending the file again, ask whether the previous attempt landed after all. Without this, a
    // resend would meet the server's early 409, which a client still streaming its body may never read
    // (the server closes with the body unread and the connection is reset).
    beforeResend: async () => {
      if (await put.landed()) throw new RegisteredMeanwhile();
    },
    body: () => {
      attempt += 1;
      const current = attempt;
      return {
        // An abandoned attempt's stream may still be read for a moment: only the latest one reports, so a
        // log never shows two attempts' progress interleaved.
        body: readWithProgress(put.file, (sentBytes) => {
          if (current === attempt) put.onProgress?.({ sentBytes, totalBytes: put.size, attempt: current });
        }),
        headers: { "content-type": "application/octet-stream", "content-length": String(put.size) },
      };
    },
  });
  return response.body;
}

/**
 * Uploads a version's binary (API.md §4), streaming it from disk: HEAD first and no transfer when the
 * version is registered; the PUT is retried after 502/503/504/429 or a dropped connection (PUT is
 * idempotent: a version is registered once); a 409 then is judged by the registered version's sha256.
 */
export async function uploadVersion(
  transport: Transport,
  getVersion: (packageName: string, version: string) => Promise<AppVersion>,
  options: UploadOptions,
): Promise<UploadResult> {
  const { packageName, version, file } = options;
  const path = `/apps/${segment(packageName)}/versions/${segment(version)}`;
  const { size } = await stat(file);

  if (options.skipIfRegistered !== false) {
    let head: Response | undefined;
    try {
      head = await transport.send({
        method: "HEAD",
        path,
        deadlineAt: options.deadlineAt,
        signal: options.signal,
      });
    } catch (error) {
      if (!(error instanceof TestbayApiError && error.status === 404)) throw error;
    }
    if (head) {
      // Registered: skipped only when it is this very build (rule 10); the ETag is its sha256 when sent.
      const etag = head.headers.get("etag")?.replaceAll('"', "").replace(/^W\//, "");
      const registered =
        etag && /^[0-9a-f]{64}$/i.test(etag) ? undefined : await getVersion(packageName, version);
      const registeredSha = (registered?.sha256 ?? etag ?? "").toLowerCase();
      const local = await sha256File(file);
      if (registeredSha === local) return { outcome: "skipped", version: registered, sizeBytes: size };
      throw differentBinaryError({
        packageName,
        version,
        file,
        registeredSha256: registeredSha,
        registeredBytes: registered?.size_bytes,
        localSha256: local,
        localBytes: size,
      });
    }
  }

  await refuseOversized({ ...options, size, path, what: "binary" });

  try {
    const registered = await putFile<AppVersion>(transport, {
      path,
      file,
      size,
      onProgress: options.onProgress,
      deadlineAt: options.deadlineAt,
      signal: options.signal,
      landed: async () => {
        try {
          await getVersion(packageName, version);
          return true;
        } catch (error) {
          if (error instanceof TestbayApiError && error.status === 404) return false;
          throw error;
        }
      },
    });
    return { outcome: "uploaded", version: registered, sizeBytes: size };
  } catch (error) {
    const registeredMeanwhile =
      error instanceof RegisteredMeanwhile ||
      (error instanceof TestbayApiError && error.code === "app_version_exists");
    if (!registeredMeanwhile) throw error;
    // Registered meanwhile: by an earlier attempt of ours that landed, or by someone else. Equal bytes are
    // the same upload; other bytes under the same version are an error worth a clear message.
    const [registered, local] = await Promise.all([getVersion(packageName, version), sha256File(file)]);
    if (registered.sha256 === local)
      return { outcome: "already_landed", version: registered, sizeBytes: size };
    throw differentBinaryError({
      packageName,
      version,
      file,
      registeredSha256: registered.sha256,
      registeredBytes: registered.size_bytes,
      localSha256: local,
      localBytes: size,
      ...(error instanceof TestbayApiError ? { problem: error.problem } : {}),
    });
  }
}

/**
 * A version is immutable: another build under a registered version would get the old build tested, so it is
 * an error naming both builds' sha256 and saying to bump the version (rule 10).
 */
export function differentBinaryError(init: {
  packageName: string;
  version: string;
  file: string;
  registeredSha256: string;
  registeredBytes: number | undefined;
  localSha256: string;
  localBytes: number;
  problem?: Problem;
}): TestbayApiError {
  const { packageName, version, file } = init;
  const bytes = init.registeredBytes === undefined ? "" : `, ${init.registeredBytes} bytes`;
  return new TestbayApiError({
    status: 409,
    method: "PUT",
    path: `/apps/${segment(packageName)}/versions/${segment(version)}`,
    problem: {
      ...init.problem,
      code: "app_version_exists",
      reason: "different_binary",
      detail: `${packageName} ${version} is registered with another build (sha256 ${shaPrefix(init.registeredSha256)}${bytes}) than ${file} (sha256 ${shaPrefix(init.localSha256)}, ${init.localBytes} bytes); a version cannot be replaced, and uploading nothing would test the old build.`,
      fix: `Bump the version: testbay upload --app ${packageName} --version NEW_VERSION --file ${file}`,
    },
  });
}

/** The fix the server gives with its 413 (file_size_exceeded), for the refusal made before sending. */
export const fileSizeExceededFix =
  "Make the binary smaller: strip debug symbols, drop unused resources, or split it by ABI.";

/** Refuses a file over the server's limit before a byte of it is sent (rule 11). */
export async function refuseOversized(init: {
  maxUploadBytes?: (() => Promise<number | undefined>) | undefined;
  size: number;
  path: string;
  file: string;
  what: string;
}): Promise<void> {
  const limit = await init.maxUploadBytes?.().catch(() => undefined);
  if (limit === undefined || init.size <= limit) return;
  const mib = (n: number) => `${(n / 1024 / 1024).toFixed(1)} MiB`;
  throw new TestbayApiError({
    status: 413,
    method: "PUT",
    path: init.path,
    problem: {
      code: "file_size_exceeded",
      limit_bytes: limit,
      detail: `The ${init.what} ${init.file} is ${init.size} bytes (${mib(init.size)}); the server's limit is ${limit} bytes (${mib(limit)}). Nothing was sent.`,
      fix: fileSizeExceededFix,
    },
  });
}

export interface TestPackageUploadOptions {
  packageName: string;
  version: string;
  /** Path of the test package on disk: the instrumentation APK (app-debug-androidTest.apk). */
  file: string;
  onProgress?: (progress: UploadProgress) => void;
  /** As for the binary: the server's upload limit, asked before the transfer. */
  maxUploadBytes?: () => Promise<number | undefined>;
  deadlineAt?: number;
  signal?: AbortSignal;
}

/**
 * `uploaded`: this call stored the test package. `skipped`: the version had this very test package already
 * (sha256 equal), nothing was sent. `already_landed`: the server said 409 (or had it before a resend) and
 * holds exactly this file: an earlier attempt of this upload had landed.
 */
export interface TestPackageUploadResult {
  outcome: UploadOutcome;
  testPackage: TestPackage;
  sizeBytes: number;
}

/** What the stored test package means for a local file: nothing stored, the same file, or another one. */
export type TestPackageComparison = "absent" | "same" | "different";

export function compareTestPackage(stored: TestPackage | null, localSha256: string): TestPackageComparison {
  if (!stored) return "absent";
  return stored.sha256.toLowerCase() === localSha256.toLowerCase() ? "same" : "different";
}

const shaPrefix = (sha256: string) => `${sha256.slice(0, 12)}…`;

/**
 * A version's test package is immutable, so other tests under the same version are refused the way another
 * binary is (rule 10): naming both files' sha256 and saying to bump the version.
 */
export function differentTestPackageError(init: {
  packageName: string;
  version: string;
  file: string;
  stored: TestPackage;
  localSha256: string;
  localBytes: number;
  problem?: Problem;
}): TestbayApiError {
  const { packageName, version, file, stored, localSha256 } = init;
  return new TestbayApiError({
    status: 409,
    method: "PUT",
    path: `/apps/${segment(packageName)}/versions/${segment(version)}/test-package`,
    problem: {
      ...init.problem,
      code: "test_package_exists",
      reason: "different_test_package",
      detail: `${packageName} ${version} has another test package (sha256 ${shaPrefix(stored.sha256)}, ${stored.size_bytes} bytes) than ${file} (sha256 ${shaPrefix(localSha256)}, ${init.localBytes} bytes); a version's test package cannot be replaced.`,
      fix: `Bump the version: upload this build and these tests under a new version (testbay upload --app ${packageName} --version NEW_VERSION --file APP --test-file ${file}).`,
    },
  });
}

/**
 * Uploads a version's test package (API.md §4b) after the version, by the rule of the version upload: look
 * first (GET: the stored package's sha256 decides), no transfer when it is this file, an error that says
 * "bump the version" when it is another; the PUT streams and retries like the binary's.
 */
export async function uploadTestPackage(
  transport: Transport,
  getTestPackage: (packageName: string, version: string) => Promise<TestPackage | null>,
  options: TestPackageUploadOptions,
): Promise<TestPackageUploadResult> {
  const { packageName, version, file } = options;
  const { size } = await stat(file);
  const judge = async (stored: TestPackage | null, problem?: Problem) => {
    if (!stored) return undefined;
    const localSha256 = await sha256File(file);
    if (compareTestPackage(stored, localSha256) === "same") return stored;
    throw differentTestPackageError({
      packageName,
      version,
      file,
      stored,
      localSha256,
      localBytes: size,
      ...(problem ? { problem } : {}),
    });
  };

  const before = await judge(await getTestPackage(packageName, version));
  if (before) return { outcome: "skipped", testPackage: before, sizeBytes: size };
  const testPackagePath = `/apps/${segment(packageName)}/versions/${segment(version)}/test-package`;
  await refuseOversized({ ...options, size, path: testPackagePath, what: "test package" });

  try {
    const stored = await putFile<TestPackage>(transport, {
      path: testPackagePath,
      file,
      size,
      onProgress: options.onProgress,
      deadlineAt: options.deadlineAt,
      signal: options.signal,
      landed: async () => (await getTestPackage(packageName, version)) !== null,
    });
    return { outcome: "uploaded", testPackage: stored, sizeBytes: size };
  } catch (error) {
    const storedMeanwhile =
      error instanceof RegisteredMeanwhile ||
      (error instanceof TestbayApiError && error.code === "test_package_exists");
    if (!storedMeanwhile) throw error;
    const stored = await getTestPackage(packageName, version);
    // The 409 said it exists; if it is gone again the server's own answer is the truthful one to show.
    if (!stored) throw error;
    const same = await judge(stored, error instanceof TestbayApiError ? error.problem : undefined);
    return { outcome: "already_landed", testPackage: same ?? stored, sizeBytes: size };
  }
}
